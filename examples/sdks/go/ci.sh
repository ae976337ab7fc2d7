#!/usr/bin/env bash
# CI for the Go SDK adapters: builds them with the pinned SDKs (install.sh), runs the
# harness's own tests, smoke-tests every adapter under both caller policies, and certifies a
# small sample (CASES, default 150) of two subjects, then compares the adapters on the same
# input (examples/sdks/same-input.py). It fails only when an adapter itself
# breaks: a build or test failure, a smoke test with crashes, timeouts, protocol errors,
# `skipped` or `errored` replies, a certification with a SUBJECT-CRASH, or toolcert exiting 2,
# 3 or 5. The SDKs' own findings (toolcert exit 1, violations) are expected.
#   TOOLCERT=target/release/toolcert CASES=150 examples/sdks/go/ci.sh
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"
CASES="${CASES:-150}"
TOOLCERT="${TOOLCERT:-target/release/toolcert}"
SAMPLE="${SAMPLE:-openai-go-chat anthropic-go}"
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

unformatted=$(cd "$here" && gofmt -l .)
if [ -z "$unformatted" ]; then pass "gofmt"; else echo "$unformatted" > "$tmp/gofmt.txt"; fail "gofmt" "$tmp/gofmt.txt"; fi
if (cd "$here" && go test -count=1 ./...) > "$tmp/test.txt" 2>&1; then
    pass "go test ($(grep -c '^ok' "$tmp/test.txt") packages)"
else
    fail "go test" "$tmp/test.txt"
fi

adapters=$(awk '!/^#/ && NF == 3 {print $2}' "$here/subjects.txt" | sort -u)
# 1. Smoke: the adapter speaks the protocol at every setting it declares. The SDKs fail some
#    smoke cases' invariants (their findings), so the verdict is read from the counters.
for adapter in $adapters; do
    for policy in as-handed-over documented; do
        log="$tmp/smoke-$adapter-$policy.txt"
        "$TOOLCERT" smoke --subject "exec:examples/sdks/go/bin/$adapter --policy $policy" > "$log" 2>&1 </dev/null
        code=$?
        if [ $code -le 1 ] \
            && grep -q ', 0 crashes, 0 timeouts, 0 protocol errors, 0 restarts, 0 skipped, 0 errored$' "$log" \
            && ! grep -q -e 'SUBJECT-CRASH' -e 'refused' -e 'could not be set up' "$log"; then
            pass "smoke $adapter --policy $policy"
        else
            fail "smoke $adapter --policy $policy (exit $code)" "$log"
        fi
    done
done

# 2. A sample certification: exit 0 or 1, a footer, and no case judged SUBJECT-CRASH.
for adapter in $SAMPLE; do
    dialect=$(awk -v a="$adapter" '!/^#/ && $2 == a {print $3; exit}' "$here/subjects.txt")
    report="$tmp/certify-$adapter.jsonl"
    "$TOOLCERT" certify --subject "exec:examples/sdks/go/bin/$adapter" \
        --level bytes --dialect "$dialect" --cases "$CASES" --seed 1 --jobs 1 --no-schema \
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

# 3. The same input, the same outcome: the Go adapters of each dialect under both caller
#    policies on the same truncated, abandoned and empty-argument cases (examples/sdks/same-input.py;
#    python/ci.sh compares them with every other language's when their environments are there).
for dialect in anthropic openai-chat openai-responses; do
    if TOOLCERT="$TOOLCERT" python3 "$here/../same-input.py" "$dialect" --only go- > "$tmp/same-$dialect.txt" 2>&1; then
        pass "same input $dialect ($(tail -n 1 "$tmp/same-$dialect.txt"))"
    else
        fail "same input $dialect" "$tmp/same-$dialect.txt"
    fi
done

echo "go sdk adapters: $passed passed, $failed failed"
[ $failed = 0 ]
