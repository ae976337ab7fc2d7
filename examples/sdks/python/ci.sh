#!/usr/bin/env bash
# CI for the Python SDK adapters. Installs the pinned SDKs (install.sh), smoke-tests every
# adapter, and certifies a sample (CASES, default 300) of two subjects. It fails only when an
# adapter itself breaks: the smoke suite or a sample shows a crash, timeout, protocol error,
# an `errored` or `skipped` reply (all judged SUBJECT-CRASH), or toolcert exits 2, 3 or 5.
# The SDKs' own findings (toolcert exit 1, violations) are expected and do not fail it.
#   TOOLCERT=target/release/toolcert CASES=300 examples/sdks/python/ci.sh
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"
CASES="${CASES:-300}"
TOOLCERT="${TOOLCERT:-target/release/toolcert}"
python="examples/sdks/python/.venv/bin/python"
SAMPLE="${SAMPLE:-anthropic_sdk.py openai_chat.py}"

if [ ! -x "$TOOLCERT" ]; then
    echo "ci.sh: no toolcert binary at $TOOLCERT (cargo build --release, or set TOOLCERT)" >&2
    exit 1
fi
"$here/install.sh" || { echo "ci.sh: install.sh failed" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/     /' "$2" | tail -n 40; }

adapters=$(awk '!/^#/ && NF == 3 {print $2}' "$here/subjects.txt" | sort -u)

# 1. Smoke: the adapter speaks the protocol at every setting it declares. The SDKs fail some
#    smoke cases' invariants (their findings), so the verdict is read from the subject's
#    counters, not from the exit code.
for adapter in $adapters; do
    log="$tmp/smoke-$adapter.txt"
    "$TOOLCERT" smoke --subject "exec:$python examples/sdks/python/$adapter" > "$log" 2>&1 </dev/null
    code=$?
    if [ $code -le 1 ] \
        && grep -q ', 0 crashes, 0 timeouts, 0 protocol errors, 0 restarts, 0 skipped, 0 errored$' "$log" \
        && ! grep -q -e 'SUBJECT-CRASH' -e 'refused' -e 'could not be set up' "$log"; then
        pass "smoke $adapter"
    else
        fail "smoke $adapter (exit $code)" "$log"
    fi
done

# 2. A sample certification of some subjects: exit 0 or 1, and no case judged SUBJECT-CRASH.
for adapter in $SAMPLE; do
    dialect=$(awk -v a="$adapter" '!/^#/ && $2 == a {print $3; exit}' "$here/subjects.txt")
    report="$tmp/certify-$adapter.jsonl"
    "$TOOLCERT" certify --subject "exec:$python examples/sdks/python/$adapter" \
        --level bytes --dialect "$dialect" --cases "$CASES" --seed 1 --no-schema \
        --format jsonl > "$report" 2> "$tmp/certify-$adapter.err" </dev/null
    code=$?
    crashes=$(grep -c '"invariant":"SUBJECT-CRASH"' "$report")
    if [ $code -le 1 ] && [ "$crashes" = 0 ] && tail -n 1 "$report" | grep '"record":"footer"' >/dev/null; then
        pass "certify $adapter $dialect ($CASES cases, exit $code)"
    else
        grep '"invariant":"SUBJECT-CRASH"' "$report" | sed -n '1,3p' | cut -c1-1500 > "$tmp/crashes.txt"
        cat "$tmp/certify-$adapter.err" >> "$tmp/crashes.txt"
        fail "certify $adapter $dialect (exit $code, $crashes cases with SUBJECT-CRASH)" "$tmp/crashes.txt"
    fi
done

# 3. The same input, the same outcome: every installed adapter of a dialect (Node ones too,
#    when node_modules is there), under both caller policies, on the same truncated,
#    abandoned and empty-argument cases (examples/sdks/same-input.py).
for dialect in ${SAME_INPUT-openai-chat openai-responses anthropic}; do
    # pydantic-ai is left out unless SAME_INPUT_SKIP says otherwise (slow: see node/ci.sh).
    if SAME_INPUT_SKIP="${SAME_INPUT_SKIP-python-pydantic-ai}" TOOLCERT="$TOOLCERT" \
        python3 "$here/../same-input.py" "$dialect" > "$tmp/same-$dialect.txt" 2>&1; then
        pass "same input $dialect ($(tail -n 1 "$tmp/same-$dialect.txt"))"
    else
        fail "same input $dialect" "$tmp/same-$dialect.txt"
    fi
done

echo "python sdk adapters: $passed passed, $failed failed"
[ $failed = 0 ]
