#!/usr/bin/env bash
# Prices every SDK adapter with `toolcert bench` (docs/COST.md) at the bytes level of each
# dialect it speaks, beside the floor in its own language, and writes one cost report each:
#   docs/certification/cost/NAME--DIALECT.json
# examples/sdks/certification.py turns them into the cost rows of docs/CERTIFICATION.md
# (examples/sdks/cost_rows.py).
#
#   examples/sdks/price-all.sh                       every subject (assumes the installs ran)
#   examples/sdks/price-all.sh python-anthropic      the runs whose NAME--DIALECT contains every word
#   DRY=1 examples/sdks/price-all.sh                 list the runs only
# Env: TOOLCERT (target/release/toolcert), BUDGET (seconds one run of a tier may be predicted to
# take before its series stops; 5), INSTALL=1 to run the install scripts first.
# The floors: the Python package's reference (`python -m toolcert_adapter.floor`, in the
# subject's venv) for Python subjects, the npm package's (`node node/src/floor.js`, with the
# subject's Node) for Node subjects; none for the Bedrock subjects (neither package's reference
# decodes AWS event streams) and for the Rust subjects (genai, rig-core, the
# async-openai pattern: toolcert has no Rust floor as a subprocess, so their rows give the
# growth exponents without a ratio). The Rust adapters time their own thread's CPU around
# the SDK's run (the mock provider serves on another thread).
# Exit status: 0 every run was priced (toolcert bench 0 linear, 1 superlinear: a finding, not
# a failure, or 2 with a report: inconclusive); 1 a run could not be priced (2 usage, 3 crashed,
# timed out or cannot be timed), its stderr kept beside the report as NAME--DIALECT.err.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
TOOLCERT="${TOOLCERT:-target/release/toolcert}"
BUDGET="${BUDGET:-5}"
PY=examples/sdks/python/.venv/bin/python
N22=examples/sdks/node/v22
OUT=docs/certification/cost
RUST=examples/sdks/rust/target/release

# name | command | dialects | floor (empty: toolcert's default for the subject's language)
SUBJECTS="
python-anthropic|$PY examples/sdks/python/anthropic_sdk.py|anthropic|
python-openai|$PY examples/sdks/python/openai_chat.py|openai-chat|
python-openai|$PY examples/sdks/python/openai_responses.py|openai-responses|
python-langchain-openai|$PY examples/sdks/python/langchain_openai_sdk.py|openai-chat|
python-litellm|$PY examples/sdks/python/litellm_sdk.py|openai-chat|
python-boto3|$PY examples/sdks/python/bedrock_boto3.py|bedrock|none
python-pydantic-ai|$PY examples/sdks/python/pydantic_ai_sdk.py --dialect anthropic|anthropic|
python-pydantic-ai|$PY examples/sdks/python/pydantic_ai_sdk.py --dialect openai-chat|openai-chat|
python-pydantic-ai|$PY examples/sdks/python/pydantic_ai_sdk.py --dialect openai-responses|openai-responses|
python-pydantic-ai-agent|$PY examples/sdks/python/pydantic_ai_agent.py --dialect anthropic|anthropic|
python-pydantic-ai-agent|$PY examples/sdks/python/pydantic_ai_agent.py --dialect openai-chat|openai-chat|
python-anthropic-tool-runner|$PY examples/sdks/python/anthropic_tool_runner.py|anthropic|
anthropic-sdk-typescript|node examples/sdks/node/anthropic.mjs|anthropic|exec:node node/src/floor.js
openai-node|node examples/sdks/node/openai-chat.mjs|openai-chat|exec:node node/src/floor.js
openai-node|node examples/sdks/node/openai-responses.mjs|openai-responses|exec:node node/src/floor.js
openai-node-6.30.1|env TOOLCERT_NODE_OPENAI=openai-6.30.1 node examples/sdks/node/openai-responses.mjs|openai-responses|exec:node node/src/floor.js
vercel-ai|node examples/sdks/node/vercel-ai.mjs|anthropic openai-chat openai-responses|exec:node node/src/floor.js
vercel-ai-openai-3.0.81|env TOOLCERT_NODE_AI_OPENAI=ai-sdk-openai-3.0.81 node examples/sdks/node/vercel-ai.mjs|openai-chat|exec:node node/src/floor.js
aws-sdk-js-v3|node examples/sdks/node/bedrock.mjs|bedrock|none
openai-node-7|$N22/bin/node --preserve-symlinks --preserve-symlinks-main $N22/openai-chat.mjs|openai-chat|exec:$N22/bin/node node/src/floor.js
openai-node-7|$N22/bin/node --preserve-symlinks --preserve-symlinks-main $N22/openai-responses.mjs|openai-responses|exec:$N22/bin/node node/src/floor.js
vercel-ai-7|$N22/bin/node --preserve-symlinks --preserve-symlinks-main $N22/vercel-ai.mjs|anthropic openai-chat openai-responses|exec:$N22/bin/node node/src/floor.js
genai|$RUST/toolcert-genai|anthropic openai-chat openai-responses|none
rig-core|$RUST/toolcert-rig|anthropic openai-chat openai-responses|none
async-openai-tool-call-stream|$RUST/toolcert-async-openai|openai-chat|none
"

runs=()
while IFS='|' read -r name command dialects floor; do
    [ -n "$name" ] || continue
    for dialect in $dialects; do
        key="$name--$dialect"
        keep=1
        for w in "$@"; do case "$key" in *"$w"*) ;; *) keep=0 ;; esac; done
        [ $keep = 1 ] && runs+=("$key|$command|$dialect|$floor")
    done
done <<< "$SUBJECTS"
total=${#runs[@]}
[ "$total" -gt 0 ] || { echo "price-all.sh: no run matches: $*" >&2; exit 1; }
if [ -n "${DRY:-}" ]; then
    printf '%s\n' "${runs[@]}" | cut -d'|' -f1
    exit 0
fi
if [ "${INSTALL:-0}" = 1 ]; then
    examples/sdks/python/install.sh || exit 1
    examples/sdks/node/install.sh || exit 1
fi
[ -x "$TOOLCERT" ] || { echo "price-all.sh: no toolcert binary at $TOOLCERT (cargo build --release, or set TOOLCERT)" >&2; exit 1; }

mkdir -p "$OUT"
# The Rust adapters give up on a stream after 3 s (a hang, in a certification); a priced tier
# may take longer on the wall clock, and the harness's own timeout per run (3 x BUDGET + 30 s)
# is what stops its series then (toolcert bench says so in the series' `stopped`).
export TOOLCERT_STREAM_TIMEOUT="${TOOLCERT_STREAM_TIMEOUT:-600}"
status=0
i=0
for run in "${runs[@]}"; do
    IFS='|' read -r key command dialect floor <<< "$run"
    i=$((i + 1))
    if [ "${command#"$N22"}" != "$command" ] && [ ! -x "$N22/bin/node" ]; then
        echo "[$i/$total] $key: skipped: no Node 22 at $N22/bin/node (examples/sdks/node/install.sh could not get it)"
        continue
    fi
    program="${command%% *}"
    if [ "${program#*/}" != "$program" ] && [ ! -x "$program" ]; then
        echo "[$i/$total] $key: skipped: $program is not built (examples/sdks/rust: cargo build --release --locked -p NAME)"
        continue
    fi
    flags=()
    [ -n "$floor" ] && flags+=(--floor "$floor")
    printf '[%d/%d] %s ... ' "$i" "$total" "$key"
    t0=$(date +%s)
    "$TOOLCERT" bench --subject "exec:$command" --level bytes --dialect "$dialect" "${flags[@]}" \
        --budget "$BUDGET" --format json > "$OUT/$key.json.tmp" 2> "$OUT/$key.err" </dev/null
    code=$?
    secs=$(( $(date +%s) - t0 ))
    # 2 is also what an inconclusive price exits with (a series under two tiers): its JSON is a result.
    [ $code = 2 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$OUT/$key.json.tmp" 2>/dev/null && code=0
    case $code in
        0|1)
            mv "$OUT/$key.json.tmp" "$OUT/$key.json"
            rm -f "$OUT/$key.err"
            summary=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["growth"] + ": " + ", ".join("%s %s" % (s["series"], "-" if s["exponent"] is None else "%.2f" % s["exponent"]) for s in r["series"]))
' "$OUT/$key.json")
            echo "exit $code in ${secs}s: $summary"
            ;;
        *)
            rm -f "$OUT/$key.json.tmp"
            status=1
            echo "exit $code in ${secs}s: not priced, see $OUT/$key.err"
            tail -n 3 "$OUT/$key.err" | sed 's/^/    /'
            ;;
    esac
done
exit $status
