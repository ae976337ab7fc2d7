#!/usr/bin/env bash
# Certifies the genai crate (examples/sdks/rust) at the bytes level in every dialect it speaks
# and writes
#   docs/certification/reports/genai--DIALECT.jsonl   the report (one record per case)
#   corpus/findings/genai/DIALECT/failures/           reproducers of the failures kept in full
# (corpus/findings/genai/DIALECT/extra/ holds reproducers picked by hand for the notes, for
# findings past the first 32 failures: it is left alone.)
# Builds the adapter (cargo build --release --locked) unless it is there. Run from anywhere:
#   CASES=2000 TOOLCERT=target/release/toolcert examples/sdks/rust/certify.sh [DIALECT ...]
# TOOLCERT is relative to the repository root. genai does not validate arguments against JSON
# Schema, so every run uses --no-schema.
# Exit status: 0 when every run finished (toolcert exit 0 = conforms, 1 = violations: the
# crate's findings); 1 when a run could not be judged (exit 2 usage, 3 the adapter crashed or
# timed out, 5 an output could not be written).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"
CASES="${CASES:-2000}"
SEED="${SEED:-1}"
TOOLCERT="${TOOLCERT:-target/release/toolcert}"
adapter="examples/sdks/rust/target/release/toolcert-genai"
if [ ! -x "$TOOLCERT" ]; then
    echo "certify.sh: no toolcert binary at $TOOLCERT (cargo build --release --bin toolcert, or set TOOLCERT)" >&2
    exit 1
fi
if [ ! -x "$adapter" ]; then
    (cd examples/sdks/rust && cargo build --release --locked) || exit 1
fi
dialects=("$@")
[ ${#dialects[@]} -gt 0 ] || dialects=(anthropic openai-chat openai-responses)
mkdir -p docs/certification/reports
status=0
for dialect in "${dialects[@]}"; do
    out="corpus/findings/genai/$dialect"
    report="docs/certification/reports/genai--$dialect.jsonl"
    rm -rf "$out/failures" "$out/report.jsonl"
    start=$(date +%s)
    "$TOOLCERT" certify --subject "exec:$adapter" --level bytes --dialect "$dialect" \
        --cases "$CASES" --seed "$SEED" --no-schema --format jsonl --out "$out/" > "$report" </dev/null
    code=$?
    secs=$(( $(date +%s) - start ))
    # --out also writes report.jsonl, the same bytes as the report above: keep one copy.
    if [ -f "$out/report.jsonl" ] && cmp -s "$out/report.jsonl" "$report"; then
        rm -f "$out/report.jsonl"
    fi
    footer=$(tail -n 1 "$report")
    field() { printf '%s' "$footer" | grep -o "\"$1\":[0-9]*" | sed -n 1p | cut -d: -f2; }
    verdict="$(field cases) cases, $(field failed) failed, $(field skipped) skipped"
    echo "genai $dialect: exit $code in ${secs}s: $verdict"
    case $code in
        0|1) ;;
        *) status=1 ;;
    esac
done
exit $status
