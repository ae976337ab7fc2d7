#!/usr/bin/env bash
# Certifies every Node SDK subject at the bytes level and writes the reports:
#   docs/certification/reports/<sdk>--<dialect>.jsonl    one JSONL report per subject and dialect
#   corpus/findings/<sdk>/<dialect>/                      report.jsonl and failures/ (reproducers)
#
# Environment: CASES (generated cases per subject, default 2000), SEED (default 1),
# TOOLCERT (the toolcert binary, default target/release/toolcert, relative to the repo root),
# ONLY (run only the subjects whose "<sdk>--<dialect>" contains this), REPORTS and FINDINGS
# (output folders, relative to the repo root unless absolute).
# Exit: 0 when every subject ran (violations are findings, not failures of this script);
# 1 when a subject crashed (exit 3), the run broke (exit 2 or 5) or an adapter errored.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"

CASES=${CASES:-2000}
SEED=${SEED:-1}
TOOLCERT=${TOOLCERT:-target/release/toolcert}
REPORTS=${REPORTS:-docs/certification/reports}
FINDINGS=${FINDINGS:-corpus/findings}
ONLY=${ONLY:-}

if [ ! -x "$TOOLCERT" ]; then
  echo "certify.sh: no toolcert binary at $TOOLCERT (build it with cargo build --release, or set TOOLCERT)" >&2
  exit 2
fi
if [ ! -d "$here/node_modules" ]; then
  "$here/install.sh" || exit 2
fi

# sdk  adapter  dialect
SUBJECTS="
openai-node               openai-chat.mjs       openai-chat
openai-node               openai-responses.mjs  openai-responses
anthropic-sdk-typescript  anthropic.mjs         anthropic
vercel-ai                 vercel-ai.mjs         openai-chat
vercel-ai                 vercel-ai.mjs         openai-responses
vercel-ai                 vercel-ai.mjs         anthropic
"

mkdir -p "$REPORTS"
status=0
printf '%-44s %6s %6s %6s %-12s %7s %s\n' subject cases failed skipped conformance seconds exit
while read -r sdk adapter dialect; do
  [ -z "$sdk" ] && continue
  name="$sdk--$dialect"
  case "$name" in *"$ONLY"*) ;; *) continue ;; esac
  out="$FINDINGS/$sdk/$dialect"
  rm -rf "$out/failures" "$out/report.jsonl"
  mkdir -p "$out"
  started=$(date +%s)
  "$TOOLCERT" certify --subject "exec:node examples/sdks/node/$adapter" --level bytes --dialect "$dialect" \
    --cases "$CASES" --seed "$SEED" --no-schema --format jsonl --out "$out/" > "$REPORTS/$name.jsonl" 2> "$out/stderr.txt"
  rc=$?
  took=$(( $(date +%s) - started ))
  summary=$(tail -n 1 "$REPORTS/$name.jsonl" | node -e '
    let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
      try { const f = JSON.parse(s); console.log(`${f.cases} ${f.failed} ${f.skipped} ${f.conformance}`); }
      catch { console.log("? ? ? ?"); }
    });')
  set -- $summary
  printf '%-44s %6s %6s %6s %-12s %7s %s\n' "$name" "$1" "$2" "$3" "$4" "$took" "$rc"
  case $rc in
    0|1) ;;
    *) echo "  $name: toolcert exited $rc (3: the subject crashed or timed out); see $out/stderr.txt" >&2; status=1 ;;
  esac
  grep -qv "^toolcert: wrote " "$out/stderr.txt" 2>/dev/null || rm -f "$out/stderr.txt"
done <<< "$SUBJECTS"
exit $status
