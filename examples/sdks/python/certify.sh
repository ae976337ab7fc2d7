#!/usr/bin/env bash
# Certifies every Python SDK subject (subjects.txt) at the bytes level and writes
#   docs/certification/reports/NAME--DIALECT.jsonl   the report (one record per case)
#   corpus/findings/NAME/DIALECT/failures/           reproducers of the failures kept in full
# (corpus/findings/NAME/DIALECT/extra/ holds reproducers picked by hand for the notes, for
# findings past the first 32 failures: it is left alone.)
# Assumes examples/sdks/python/install.sh ran. Run from anywhere:
#   CASES=2000 TOOLCERT=target/release/toolcert examples/sdks/python/certify.sh [NAME-or-adapter ...]
# With arguments, only the subjects whose name or adapter file matches one of them run.
#
# The SDKs do not validate arguments against JSON Schema, so every run uses --no-schema.
# Exit status: 0 when every run finished (toolcert exit 0 = conforms, 1 = violations: the
# SDKs' findings); 1 when a run could not be judged (exit 2 usage, 3 the adapter crashed or
# timed out, 5 an output could not be written).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"
CASES="${CASES:-2000}"
SEED="${SEED:-1}"
TOOLCERT="${TOOLCERT:-target/release/toolcert}"
python="examples/sdks/python/.venv/bin/python"
if [ ! -x "$python" ]; then
    echo "certify.sh: $python is missing: run examples/sdks/python/install.sh first" >&2
    exit 1
fi
if [ ! -x "$TOOLCERT" ]; then
    echo "certify.sh: no toolcert binary at $TOOLCERT (cargo build --release, or set TOOLCERT)" >&2
    exit 1
fi
mkdir -p docs/certification/reports
status=0
while read -r name adapter dialect; do
    case "$name" in ''|'#'*) continue ;; esac
    if [ $# -gt 0 ]; then
        wanted=0
        for w in "$@"; do [ "$w" = "$name" ] || [ "$w" = "$adapter" ] && wanted=1; done
        [ $wanted = 1 ] || continue
    fi
    out="corpus/findings/$name/$dialect"
    report="docs/certification/reports/$name--$dialect.jsonl"
    rm -rf "$out/failures" "$out/report.jsonl"
    start=$(date +%s)
    "$TOOLCERT" certify --subject "exec:$python examples/sdks/python/$adapter" \
        --level bytes --dialect "$dialect" --cases "$CASES" --seed "$SEED" --no-schema \
        --format jsonl --out "$out/" > "$report" </dev/null
    code=$?
    secs=$(( $(date +%s) - start ))
    # --out also writes report.jsonl, the same bytes as the report above: keep one copy.
    if [ -f "$out/report.jsonl" ] && cmp -s "$out/report.jsonl" "$report"; then
        rm -f "$out/report.jsonl"
    fi
    verdict=$(tail -n 1 "$report" | "$python" -c '
import json, sys
f = json.loads(sys.stdin.read() or "{}")
print("%s cases, %s failed, %s skipped, conformance %s" % (f.get("cases"), f.get("failed"), f.get("skipped"), f.get("conformance")))
' 2>/dev/null)
    echo "$name $dialect ($adapter): exit $code in ${secs}s: ${verdict:-no footer}"
    case $code in
        0|1) ;;
        *) status=1 ;;
    esac
done < "$here/subjects.txt"
exit $status
