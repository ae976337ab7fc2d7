#!/usr/bin/env bash
# Regenerates every SDK certification and docs/CERTIFICATION.md from the pinned versions:
# each subject (the table below) x its dialects x both caller policies (as-handed-over,
# documented: docs/CERTIFICATION.md, "Caller policies") x every server profile of the dialect
# (`toolcert profiles`; docs/SPEC.md "Server profiles"). One report per run:
#   docs/certification/reports/NAME--DIALECT[--PROFILE]--POLICY.jsonl   (no PROFILE: the provider's own)
#   corpus/findings/NAME/DIALECT[--PROFILE]/POLICY/failures/    reproducers (shrunk)
# then examples/sdks/certification.py writes docs/CERTIFICATION.md and `toolcert site` the
# site, docs/site/ (the bugs, reproducers and notes per SDK). Each report's header
# records the toolcert version, the suite digest and the SDK versions the adapter declared
# in its handshake; examples/sdks/check-digests.sh tells when they go stale.
#
#   examples/sdks/certify-all.sh                 install, build, certify everything (about an hour)
#   CASES=300 examples/sdks/certify-all.sh python-openai openai-chat   runs matching every word
#   DRY=1 examples/sdks/certify-all.sh           list the runs only
# Env: ONLY_PROFILES (names: run only these profiles besides the provider's own),
# PROFILE_POLICIES (as-handed-over: the policies the profiles other than the provider's
# own run under; "as-handed-over documented" for both), CASES (25: with JOBS=4 the run then takes about an hour on a loaded 2-core machine;
# shrinking each new finding through the real SDK costs more than the cases), JOBS (4
# certifications at a time), TIMEOUT (180 s per request), SEED (1), TOOLCERT (target/release/toolcert), POLICIES (both),
# INSTALL=0 to skip the install scripts. With no filter the old reports are removed first, so
# docs/CERTIFICATION.md shows exactly this run.
# Exit status: 0 every run was judged (toolcert 0 or 1: the SDKs' findings are expected), 1 a
# run could not be judged (toolcert 2, 3 or 5) or a step failed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
CASES="${CASES:-25}"
SEED="${SEED:-1}"
TOOLCERT="${TOOLCERT:-target/release/toolcert}"
POLICIES="${POLICIES:-as-handed-over documented}"
# Per request: an SDK that imports for a minute (litellm on a loaded machine) is not a hang.
TIMEOUT="${TIMEOUT:-180}"
# Certifications run side by side, each with one subject process (`--jobs 1`: a real SDK's
# process is slow to start, and one per certification keeps the machine's load down).
JOBS="${JOBS:-4}"
PY=examples/sdks/python/.venv/bin/python
N22=examples/sdks/node/v22

# name | command | dialects | every server profile too (yes), or the provider's own only (no)
# [| policies]; the slowest first, so that the runs side by side end together
SUBJECTS="
python-litellm|$PY examples/sdks/python/litellm_sdk.py|openai-chat|yes
python-langchain-openai|$PY examples/sdks/python/langchain_openai_sdk.py|openai-chat|yes
python-anthropic|$PY examples/sdks/python/anthropic_sdk.py|anthropic|yes
python-openai|$PY examples/sdks/python/openai_chat.py|openai-chat|yes
python-openai|$PY examples/sdks/python/openai_responses.py|openai-responses|yes
anthropic-sdk-typescript|node examples/sdks/node/anthropic.mjs|anthropic|yes
openai-node|node examples/sdks/node/openai-chat.mjs|openai-chat|yes
openai-node|node examples/sdks/node/openai-responses.mjs|openai-responses|yes
openai-node-6.30.1|env TOOLCERT_NODE_OPENAI=openai-6.30.1 node examples/sdks/node/openai-responses.mjs|openai-responses|no
openai-node-6.30.1|env TOOLCERT_NODE_OPENAI=openai-6.30.1 node examples/sdks/node/openai-chat.mjs|openai-chat|yes
vercel-ai|node examples/sdks/node/vercel-ai.mjs|anthropic openai-chat openai-responses|yes
openai-node-7|$N22/bin/node --preserve-symlinks --preserve-symlinks-main $N22/openai-chat.mjs|openai-chat|yes
openai-node-7|$N22/bin/node --preserve-symlinks --preserve-symlinks-main $N22/openai-responses.mjs|openai-responses|yes
vercel-ai-7|$N22/bin/node --preserve-symlinks --preserve-symlinks-main $N22/vercel-ai.mjs|anthropic openai-chat openai-responses|yes
genai|examples/sdks/rust/target/release/toolcert-genai|anthropic openai-chat openai-responses|yes
rig-core|examples/sdks/rust/target/release/toolcert-rig|anthropic openai-chat openai-responses|yes
async-openai-tool-call-stream|examples/sdks/rust/target/release/toolcert-async-openai|openai-chat|yes
vercel-ai-openai-3.0.81|env TOOLCERT_NODE_AI_OPENAI=ai-sdk-openai-3.0.81 node examples/sdks/node/vercel-ai.mjs|openai-chat|no
python-boto3|$PY examples/sdks/python/bedrock_boto3.py|bedrock|yes
aws-sdk-js-v3|node examples/sdks/node/bedrock.mjs|bedrock|yes
python-pydantic-ai|$PY examples/sdks/python/pydantic_ai_sdk.py --dialect anthropic|anthropic|yes
python-pydantic-ai|$PY examples/sdks/python/pydantic_ai_sdk.py --dialect openai-chat|openai-chat|yes
python-pydantic-ai|$PY examples/sdks/python/pydantic_ai_sdk.py --dialect openai-responses|openai-responses|yes
python-pydantic-ai-agent|$PY examples/sdks/python/pydantic_ai_agent.py --dialect anthropic|anthropic|no|as-handed-over
python-pydantic-ai-agent|$PY examples/sdks/python/pydantic_ai_agent.py --dialect openai-chat|openai-chat|no|as-handed-over
python-anthropic-tool-runner|$PY examples/sdks/python/anthropic_tool_runner.py|anthropic|no|as-handed-over
openai-go|examples/sdks/go/bin/openai-go-chat|openai-chat|yes
openai-go|examples/sdks/go/bin/openai-go-responses|openai-responses|yes
anthropic-sdk-go|examples/sdks/go/bin/anthropic-go|anthropic|yes
go-openai|examples/sdks/go/bin/go-openai-chat|openai-chat|yes
go-openai|examples/sdks/go/bin/go-openai-responses|openai-responses|yes
openai-java|java -jar examples/sdks/java/sdks/target/toolcert-java-sdks.jar --sdk openai-java|openai-chat openai-responses|yes
anthropic-java|java -jar examples/sdks/java/sdks/target/toolcert-java-sdks.jar --sdk anthropic-java|anthropic|yes
langchain4j|java -jar examples/sdks/java/sdks/target/toolcert-java-sdks.jar --sdk langchain4j|anthropic openai-chat openai-responses|yes
spring-ai|java -jar examples/sdks/java/spring-ai/target/toolcert-spring-ai.jar --sdk spring-ai|anthropic openai-chat|yes
"

# The server profiles of a dialect after its provider's own, by name (`toolcert profiles`).
profiles_of() {
    if [ -x "$TOOLCERT" ]; then "$TOOLCERT" profiles --names --dialect "$1"; else
        cargo run --quiet --release --bin toolcert -- profiles --names --dialect "$1"; fi | tail -n +2 | sed 's|.*/||' | tr '\n' ' '
}

runs=()
# An optional fifth field names the caller policies a subject has (agent layers run the tools
# themselves: only as-handed-over).
while IFS='|' read -r name command dialects quirky policies; do
    [ -n "$name" ] || continue
    for dialect in $dialects; do
        # The provider's own profile is the dialect's first (`toolcert profiles`), named `plain` here.
        profiles="plain"
        [ "$quirky" = yes ] && profiles="plain $(profiles_of "$dialect")"
        # ONLY_PROFILES narrows the other profiles to those named (a quicker partial run).
        if [ -n "${ONLY_PROFILES:-}" ]; then
            kept="plain"
            for p in $profiles; do case " $ONLY_PROFILES " in *" $p "*) kept="$kept $p" ;; esac; done
            profiles="$kept"
        fi
        for profile in $profiles; do
            # The caller policies differ in what a caller checks at the end of a turn, which no
            # profile changes: the other profiles run as-handed-over only (PROFILE_POLICIES).
            ps="${policies:-$POLICIES}"
            [ "$profile" = plain ] || ps="${PROFILE_POLICIES:-as-handed-over}"
            for policy in $ps; do
                key="$name--$dialect$([ "$profile" = plain ] || echo "--$profile")--$policy"
                if [ $# -gt 0 ]; then
                    keep=1
                    for w in "$@"; do case "$key" in *"$w"*) ;; *) keep=0 ;; esac; done
                    [ $keep = 1 ] || continue
                fi
                runs+=("$key|$command|$dialect|$profile|$policy")
            done
        done
    done
done <<< "$SUBJECTS"
total=${#runs[@]}
[ "$total" -gt 0 ] || { echo "certify-all.sh: no run matches: $*" >&2; exit 1; }
if [ -n "${DRY:-}" ]; then
    printf '%s\n' "${runs[@]}" | cut -d'|' -f1
    exit 0
fi

if [ "${INSTALL:-1}" = 1 ]; then
    echo "== install (pinned versions) and build"
    examples/sdks/python/install.sh || exit 1
    examples/sdks/node/install.sh || exit 1
    examples/sdks/go/install.sh || exit 1
    examples/sdks/java/install.sh || exit 1
    # One SDK per build: Cargo unifies features across what one build compiles
    # (examples/sdks/rust/Cargo.toml says why that matters).
    for p in toolcert-sdk-rust toolcert-rig toolcert-async-openai; do
        (cd examples/sdks/rust && cargo build --release --locked -p "$p") || exit 1
    done
    [ -x "$TOOLCERT" ] || cargo build --release --bin toolcert || exit 1
fi
[ -x "$TOOLCERT" ] || { echo "certify-all.sh: no toolcert binary at $TOOLCERT" >&2; exit 1; }

mkdir -p docs/certification/reports
[ $# -eq 0 ] && rm -f docs/certification/reports/*.jsonl
started=$(date +%s)
statuses="$(mktemp -d)"
trap 'rm -rf "$statuses"' EXIT

# One certification: its report, its reproducers, one line of progress when it is done (a
# whole line, so lines of runs going on side by side do not mix). Its status goes to a file.
certify_one() {
    local i=$1 run=$2 key command dialect profile policy name sub out report program code t0 verdict
    IFS='|' read -r key command dialect profile policy <<< "$run"
    name="${key%%--*}"
    sub="${key#"$name--"}"
    out="corpus/findings/$name/${sub%--"$policy"}/$policy"
    report="docs/certification/reports/$key.jsonl"
    local flags=()
    [ "$profile" = plain ] || flags+=(--profile "$profile")
    if [ "${command#"$N22"}" != "$command" ] && [ ! -x "$N22/bin/node" ]; then
        echo "[$i/$total] $key: skipped: no Node 22 at $N22/bin/node (examples/sdks/node/install.sh could not get it)"
        return
    fi
    program="${command%% *}"
    if [ "${program#*/}" != "$program" ] && [ ! -x "$program" ]; then
        echo "[$i/$total] $key: skipped: $program is not built or installed (INSTALL=1 builds it)"
        echo 1 > "$statuses/$i"
        return
    fi
    rm -rf "$out/failures" "$out/report.jsonl"
    mkdir -p "$out"
    t0=$(date +%s)
    "$TOOLCERT" certify --subject "exec:$command --policy $policy" --level bytes --dialect "$dialect" \
        "${flags[@]}" --cases "$CASES" --seed "$SEED" --no-schema --timeout "$TIMEOUT" --jobs 1 --format jsonl --out "$out/" \
        > "$report" </dev/null 2> "$out.stderr"
    code=$?
    [ -f "$out/report.jsonl" ] && cmp -s "$out/report.jsonl" "$report" && rm -f "$out/report.jsonl"
    verdict=$(tail -n 1 "$report" | python3 -c '
import json, sys
f = json.loads(sys.stdin.read() or "{}")
print("%s cases, %s failed, %s findings, conforms at %s" % (f.get("cases"), f.get("failed"), len(f.get("findings", [])), f.get("conformance")))
' 2>/dev/null)
    echo "[$i/$total] $key: exit $code in $(( $(date +%s) - t0 ))s: ${verdict:-no footer} ($(( $(date +%s) - started ))s so far)"
    case $code in
        0|1) rm -f "$out.stderr" ;;
        *) echo 1 > "$statuses/$i"; sed 's/^/    /' "$out.stderr" | tail -n 5 ;;
    esac
}

i=0
for run in "${runs[@]}"; do
    i=$((i + 1))
    if [ "$JOBS" -le 1 ]; then
        certify_one "$i" "$run"
        continue
    fi
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
    certify_one "$i" "$run" &
done
wait
status=0
[ -n "$(ls -A "$statuses")" ] && status=1
echo "== $total runs in $(( $(date +%s) - started ))s (CASES=$CASES, JOBS=$JOBS)"

echo "== docs/CERTIFICATION.md and the site (docs/site)"
# The site is rebuilt whole, so a page of an SDK no longer certified does not linger.
rm -rf docs/site
python3 examples/sdks/certification.py --toolcert "$TOOLCERT" --site docs/site || status=1
exit $status
