#!/usr/bin/env bash
# Certifies every Java SDK subject at the bytes level under both caller policies, one JSONL report
# per subject, dialect and policy:
#   $OUT/<sdk>--<dialect>--<policy>.jsonl      the report
#   $OUT/<sdk>--<dialect>--<policy>/failures/  the reproducers (shrunk)
# The matrix (docs/CERTIFICATION.md) is made by examples/sdks/certify-all.sh, which runs the same
# subjects in every server profile; this script is the quick look at the provider's own profiles.
#
# Environment: CASES (generated cases, default 100), SEED (1), TOOLCERT (the toolcert binary, default
# target/release/toolcert, relative to the repo root), OUT (default examples/sdks/java/target/reports),
# SDKS_JAR and SPRING_JAR (the jars, default those install.sh builds), ONLY (run only the subjects whose "<sdk>--<dialect>--<policy>" contains it), POLICIES (both).
# One JVM serves all cases of a run (--jobs 1): a JVM with an SDK is slow to start.
# Exit: 0 when every run was judged (violations are the SDKs' findings); 1 when a run broke
# (toolcert 2, 3 or 5).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cd "$root"
CASES=${CASES:-100}
SEED=${SEED:-1}
TOOLCERT=${TOOLCERT:-target/release/toolcert}
OUT=${OUT:-examples/sdks/java/target/reports}
ONLY=${ONLY:-}
POLICIES=${POLICIES:-as-handed-over documented}
SDKS=${SDKS_JAR:-examples/sdks/java/sdks/target/toolcert-java-sdks.jar}
SPRING=${SPRING_JAR:-examples/sdks/java/spring-ai/target/toolcert-spring-ai.jar}

[ -x "$TOOLCERT" ] || { echo "certify.sh: no toolcert binary at $TOOLCERT (cargo build --release, or set TOOLCERT)" >&2; exit 2; }
[ -f "$SDKS" ] && [ -f "$SPRING" ] || "$here/install.sh" || exit 2

# sdk  jar  dialect
SUBJECTS="
openai-java     $SDKS    openai-chat
openai-java     $SDKS    openai-responses
anthropic-java  $SDKS    anthropic
langchain4j     $SDKS    openai-chat
langchain4j     $SDKS    openai-responses
langchain4j     $SDKS    anthropic
spring-ai       $SPRING  openai-chat
spring-ai       $SPRING  anthropic
"
mkdir -p "$OUT"
status=0
printf '%-48s %6s %6s %6s %-12s %7s %s\n' subject cases failed skipped conformance seconds exit
while read -r sdk jar dialect; do
  [ -z "$sdk" ] && continue
  for policy in $POLICIES; do
    name="$sdk--$dialect--$policy"
    case "$name" in *"$ONLY"*) ;; *) continue ;; esac
    rm -rf "${OUT:?}/$name" "$OUT/$name.jsonl"
    started=$(date +%s)
    "$TOOLCERT" certify --subject "exec:java -jar $jar --sdk $sdk --policy $policy" --level bytes --dialect "$dialect" \
      --cases "$CASES" --seed "$SEED" --no-schema --jobs 1 --format jsonl --out "$OUT/$name/" \
      > "$OUT/$name.jsonl" 2> "$OUT/$name.stderr"
    rc=$?
    took=$(( $(date +%s) - started ))
    summary=$(tail -n 1 "$OUT/$name.jsonl" | python3 -c 'import json,sys
try:
    f = json.load(sys.stdin); print(f["cases"], f["failed"], f["skipped"], f["conformance"])
except Exception:
    print("? ? ? ?")')
    set -- $summary
    printf '%-48s %6s %6s %6s %-12s %7s %s\n' "$name" "$1" "$2" "$3" "$4" "$took" "$rc"
    case $rc in
      0|1) rm -f "$OUT/$name.stderr" ;;
      *) echo "  $name: toolcert exited $rc; see $OUT/$name.stderr" >&2; status=1 ;;
    esac
  done
done <<< "$SUBJECTS"
exit $status
