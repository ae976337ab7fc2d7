#!/usr/bin/env bash
# CI for the Node SDK adapters: install the pinned SDKs, smoke-test two adapters, and certify
# a small sample (CASES, default 300) of two subjects. It fails only when an adapter itself
# breaks: an install failure, a smoke test or certification with crashes, timeouts, protocol
# errors or `errored` replies, a SUBJECT-CRASH, or toolcert exiting with 2, 3 or 5. Violations
# of invariants (toolcert exit 1) are the SDKs' findings and expected.
#
# Environment: TOOLCERT (default target/release/toolcert, relative to the repo root), CASES,
# SAMPLE (the adapter:dialect pairs to certify).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
TOOLCERT=${TOOLCERT:-target/release/toolcert}
CASES=${CASES:-300}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

if [ ! -x "$TOOLCERT" ]; then
  echo "ci.sh: no toolcert binary at $TOOLCERT" >&2
  exit 2
fi
"$here/install.sh" || { echo "FAIL: install"; exit 1; }

# The stats line of a smoke test: "subject: N runs, C crashes, T timeouts, P protocol errors, R restarts, S skipped, E errored".
check_smoke() {
  local adapter=$1
  local out rc
  out=$("$TOOLCERT" smoke --subject "exec:node examples/sdks/node/$adapter" 2>&1); rc=$?
  echo "$out" | tail -n 2
  case $rc in 0|1) ;; *) fail "smoke $adapter: toolcert exited $rc"; echo "$out"; return ;; esac
  local stats
  stats=$(echo "$out" | grep -E '^ *subject: [0-9]+ runs' | tail -n 1)
  [ -n "$stats" ] || { fail "smoke $adapter: no stats line"; echo "$out"; return; }
  echo "$stats" | grep -Eq ' 0 crashes, 0 timeouts, 0 protocol errors, [0-9]+ restarts, 0 skipped, 0 errored' \
    || fail "smoke $adapter: the adapter broke ($stats)"
}

# A certification sample: exit 0 or 1 only, no SUBJECT-CRASH, no skipped or errored reply.
check_certify() {
  local adapter=$1 dialect=$2
  local report="$work/${adapter%.mjs}-$dialect.jsonl" rc started
  started=$(date +%s)
  "$TOOLCERT" certify --subject "exec:node examples/sdks/node/$adapter" --level bytes --dialect "$dialect" \
    --cases "$CASES" --seed 1 --no-schema --format jsonl > "$report" 2> "$work/stderr"; rc=$?
  echo "certify $adapter ($dialect): exit $rc in $(( $(date +%s) - started )) s: $(tail -n 1 "$report" | cut -c1-160)"
  case $rc in 0|1) ;; *) fail "certify $adapter $dialect: toolcert exited $rc"; tail -n 20 "$work/stderr" ;; esac
  node - "$report" <<'JS' || fail "certify $adapter $dialect: the adapter broke"
const lines = require("fs").readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
let bad = 0;
for (const r of lines) {
  if (r.record !== "case") continue;
  const crash = (r.broke ?? []).some((b) => b.invariant === "SUBJECT-CRASH");
  const refused = r.status === "skipped" && /the subject (errored|skipped)|refused/.test(r.reason ?? "");
  if (crash || refused) {
    bad += 1;
    if (bad <= 5) console.error(`  ${r.case}: ${crash ? "SUBJECT-CRASH" : r.reason}`);
  }
}
const footer = lines.find((r) => r.record === "footer");
if (!footer) { console.error("  no footer: the run did not finish"); process.exit(1); }
process.exit(bad ? 1 : 0);
JS
}

check_smoke openai-chat.mjs
check_smoke anthropic.mjs
# SAMPLE: adapter:dialect pairs to certify (default: three subjects, three dialects).
for pair in ${SAMPLE:-openai-chat.mjs:openai-chat anthropic.mjs:anthropic vercel-ai.mjs:openai-responses}; do
  check_certify "${pair%%:*}" "${pair#*:}"
done

# The same input, the same outcome: every installed adapter of a dialect (Python ones too,
# when their venv is there), under both caller policies, on the same truncated, abandoned and
# empty-argument cases (examples/sdks/same-input.py).
# examples/sdks/python/ci.sh runs it for both languages when the venv is there, so here it
# runs by default only without one.
default_same="openai-chat openai-responses anthropic"
[ -x "$here/../python/.venv/bin/python" ] && default_same=""
# pydantic-ai is left out here unless SAME_INPUT_SKIP says otherwise: one scenario through it
# took 30 s to 8 min of wall time on the loaded 2-core machine (36 of them per run).
for dialect in ${SAME_INPUT-$default_same}; do
  if SAME_INPUT_SKIP="${SAME_INPUT_SKIP-python-pydantic-ai}" TOOLCERT="$TOOLCERT" \
      python3 "$here/../same-input.py" "$dialect" > "$work/same-$dialect.txt" 2>&1; then
    echo "same input $dialect: $(tail -n 1 "$work/same-$dialect.txt")"
  else
    fail "same input: $dialect"; tail -n 40 "$work/same-$dialect.txt"
  fi
done

if [ "$failures" -ne 0 ]; then
  echo "node SDK adapters: $failures check(s) failed"
  exit 1
fi
echo "node SDK adapters: every check passed (violations found are the SDKs' findings)"
