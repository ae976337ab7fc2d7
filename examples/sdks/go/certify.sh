#!/usr/bin/env bash
# Certifies every Go SDK subject (subjects.txt) at the bytes level, in its provider's own
# server profile, under both caller policies, and prints each verdict. The reports and
# reproducers go to OUT (default: a new temporary directory, printed), one per run:
#   OUT/NAME--DIALECT--POLICY.jsonl        the report (one record per case)
#   OUT/NAME--DIALECT--POLICY/failures/    reproducers of the failures kept in full
# (examples/sdks/certify-all.sh is the run that writes docs/certification/: every profile.)
# Assumes install.sh ran. Run from anywhere:
#   CASES=100 TOOLCERT=target/release/toolcert examples/sdks/go/certify.sh [NAME-or-adapter ...]
# The SDKs do not validate arguments against JSON Schema, so every run uses --no-schema.
# Exit status: 0 when every run was judged (toolcert 0 or 1: the SDKs' findings are
# expected); 1 when a run could not be judged (exit 2, 3 or 5).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"
CASES="${CASES:-100}"
SEED="${SEED:-1}"
TOOLCERT="${TOOLCERT:-target/release/toolcert}"
POLICIES="${POLICIES:-as-handed-over documented}"
OUT="${OUT:-$(mktemp -d -t toolcert-go-sdks-XXXXXX)}"
if [ ! -x "$TOOLCERT" ]; then
    echo "certify.sh: no toolcert binary at $TOOLCERT (cargo build --release, or set TOOLCERT)" >&2
    exit 1
fi
mkdir -p "$OUT"
echo "certify.sh: reports in $OUT"
status=0
while read -r name adapter dialect; do
    case "$name" in ''|'#'*) continue ;; esac
    if [ $# -gt 0 ]; then
        wanted=0
        for w in "$@"; do { [ "$w" = "$name" ] || [ "$w" = "$adapter" ]; } && wanted=1; done
        [ $wanted = 1 ] || continue
    fi
    bin="examples/sdks/go/bin/$adapter"
    [ -x "$bin" ] || { echo "certify.sh: $bin is missing: run examples/sdks/go/install.sh first" >&2; exit 1; }
    for policy in $POLICIES; do
        key="$name--$dialect--$policy"
        start=$(date +%s)
        "$TOOLCERT" certify --subject "exec:$bin --policy $policy" --level bytes --dialect "$dialect" \
            --cases "$CASES" --seed "$SEED" --jobs 1 --no-schema --format jsonl --out "$OUT/$key/" \
            > "$OUT/$key.jsonl" 2> "$OUT/$key.err" </dev/null
        code=$?
        verdict=$(tail -n 1 "$OUT/$key.jsonl" | python3 -c '
import json, sys
f = json.loads(sys.stdin.read() or "{}")
tiers = " ".join("%s=%s" % (t["tier"], t["verdict"]) for t in f.get("tiers", []))
print("%s cases, %s failed, conformance %s; %s" % (f.get("cases"), f.get("failed"), f.get("conformance"), tiers))
' 2>/dev/null)
        echo "$key ($adapter): exit $code in $(( $(date +%s) - start ))s: ${verdict:-no footer}"
        case $code in 0|1) ;; *) status=1; tail -n 5 "$OUT/$key.err" ;; esac
    done
done < "$here/subjects.txt"
exit $status
