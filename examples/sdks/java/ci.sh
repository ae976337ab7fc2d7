#!/usr/bin/env bash
# CI for the Java SDK adapters: build the pinned SDKs (install.sh), smoke-test every adapter, and
# certify a small sample (CASES, default 60) of three subjects. It fails only when an adapter
# itself breaks: a build failure, a smoke test or certification with crashes, timeouts, protocol
# errors or `errored`/`skipped` replies, a SUBJECT-CRASH, or toolcert exiting with 2, 3 or 5.
# Violations of invariants (toolcert exit 1) are the SDKs' findings and expected.
#
# Environment: TOOLCERT (default target/release/toolcert, relative to the repo root), CASES,
# SAMPLE (sdk:dialect:policy triples to certify), INSTALL=0 to use the jars already built.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
TOOLCERT=${TOOLCERT:-target/release/toolcert}
CASES=${CASES:-60}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

[ -x "$TOOLCERT" ] || { echo "ci.sh: no toolcert binary at $TOOLCERT" >&2; exit 2; }
if [ "${INSTALL:-1}" = 1 ]; then
  "$here/install.sh" || { echo "FAIL: install"; exit 1; }
fi
jar_of() {
  case $1 in spring-ai) echo examples/sdks/java/spring-ai/target/toolcert-spring-ai.jar ;;
    *) echo examples/sdks/java/sdks/target/toolcert-java-sdks.jar ;; esac
}

# The stats line of a smoke test: "subject: N runs, C crashes, T timeouts, P protocol errors, R restarts, S skipped, E errored".
check_smoke() {
  local sdk=$1 out rc stats
  out=$("$TOOLCERT" smoke --subject "exec:java -jar $(jar_of "$sdk") --sdk $sdk" 2>&1); rc=$?
  echo "smoke $sdk: $(echo "$out" | tail -n 1)"
  case $rc in 0|1) ;; *) fail "smoke $sdk: toolcert exited $rc"; echo "$out" | tail -n 20; return ;; esac
  stats=$(echo "$out" | grep -E '^ *subject: [0-9]+ runs' | tail -n 1)
  [ -n "$stats" ] || { fail "smoke $sdk: no stats line"; echo "$out" | tail -n 20; return; }
  echo "$stats" | grep -Eq ' 0 crashes, 0 timeouts, 0 protocol errors, [0-9]+ restarts, 0 skipped, 0 errored' \
    || { fail "smoke $sdk: the adapter broke ($stats)"; echo "$out" | grep -B2 -A6 SUBJECT-CRASH | sed -n '1,40p'; }
}

# A certification sample: exit 0 or 1 only, a footer, no SUBJECT-CRASH, no skipped or errored reply.
check_certify() {
  local sdk=$1 dialect=$2 policy=$3
  local report="$work/$sdk-$dialect-$policy.jsonl" rc started
  started=$(date +%s)
  "$TOOLCERT" certify --subject "exec:java -jar $(jar_of "$sdk") --sdk $sdk --policy $policy" --level bytes \
    --dialect "$dialect" --cases "$CASES" --seed 1 --no-schema --jobs 1 --format jsonl > "$report" 2> "$work/stderr"; rc=$?
  echo "certify $sdk ($dialect, $policy): exit $rc in $(( $(date +%s) - started )) s: $(tail -n 1 "$report" | cut -c1-160)"
  case $rc in 0|1) ;; *) fail "certify $sdk $dialect: toolcert exited $rc"; tail -n 20 "$work/stderr"; return ;; esac
  python3 - "$report" <<'PY' || fail "certify $sdk $dialect $policy: the adapter broke"
import json, re, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = 0
for r in lines:
    if r.get("record") != "case":
        continue
    crash = any(b.get("invariant") == "SUBJECT-CRASH" for b in r.get("broke") or [])
    refused = r.get("status") == "skipped" and re.search(r"the subject (errored|skipped)|refused", r.get("reason") or "")
    if crash or refused:
        bad += 1
        if bad <= 5:
            print(f"  {r.get('case')}: {'SUBJECT-CRASH' if crash else r.get('reason')}", file=sys.stderr)
if not any(r.get("record") == "footer" for r in lines):
    print("  no footer: the run did not finish", file=sys.stderr)
    sys.exit(1)
sys.exit(1 if bad else 0)
PY
}

for sdk in openai-java anthropic-java langchain4j spring-ai; do
  check_smoke "$sdk"
done
for triple in ${SAMPLE:-openai-java:openai-chat:documented anthropic-java:anthropic:as-handed-over spring-ai:openai-chat:as-handed-over}; do
  IFS=: read -r sdk dialect policy <<< "$triple"
  check_certify "$sdk" "$dialect" "$policy"
done

if [ "$failures" -ne 0 ]; then
  echo "java SDK adapters: $failures check(s) failed"
  exit 1
fi
echo "java SDK adapters: every check passed (violations found are the SDKs' findings)"
