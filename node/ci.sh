#!/usr/bin/env bash
# CI for the Node package: its own tests, then, in a fresh npm project outside the
# checkout, `npm install <repo>/node` and the node:test integration as a user meets it: the
# buggy toyacc adapter must fail under `node --test` with its finding, reproducer and replay
# line (and the replay line must run as printed), the correct one must pass.
#
# The toolcert binary: with TOOLCERT_NPM_TARBALL=FILE, the npm package node/bin/pack.sh
# makes, installed into the project (the helper then finds `toolcert` in node_modules/.bin
# on PATH, as a user without Rust would); otherwise $TOOLCERT_BIN, otherwise
# target/release/toolcert (built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [ -n "${TOOLCERT_NPM_TARBALL:-}" ]; then
    unset TOOLCERT_BIN
elif [ -z "${TOOLCERT_BIN:-}" ]; then
    cargo build --release --quiet --bin toolcert
    export TOOLCERT_BIN=$repo/target/release/toolcert
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd node && node --test test/)

mkdir "$work/project"
cp node/examples/toyacc.mjs node/examples/adapter.mjs node/examples/toyacc.test.mjs "$work/project/"
cd "$work/project"
echo '{"name": "toyacc-certification", "private": true, "type": "module"}' >package.json
npm install --no-audit --no-fund --silent "$repo/node" ${TOOLCERT_NPM_TARBALL:+"$TOOLCERT_NPM_TARBALL"}
if [ -n "${TOOLCERT_NPM_TARBALL:-}" ]; then
    export PATH="$PWD/node_modules/.bin:$PATH"
    echo "node/ci.sh: toolcert from the npm package: $(toolcert --version)"
fi

echo "node/ci.sh: the buggy accumulator must fail"
set +e
TOYACC_FLAGS=--buggy CASES=200 node --test toyacc.test.mjs >"$work/buggy.log" 2>&1
status=$?
set -e
cat "$work/buggy.log"
[ "$status" -ne 0 ] || { echo "node/ci.sh: node --test passed the buggy adapter"; exit 1; }
for want in "ACC-FIDELITY (must)" "urgent requestfrom ops" "reproducer: " "replay: toolcert certify"; do
    grep -qF "$want" "$work/buggy.log" || { echo "node/ci.sh: the node --test output lacks: $want"; exit 1; }
done
# The replay line runs as printed (with the binary for `toolcert`): it fails again.
replay=$(grep -m1 "replay: toolcert certify" "$work/buggy.log" | sed 's/^ *replay: toolcert //')
set +e
eval "\"\${TOOLCERT_BIN:-toolcert}\" $replay" >"$work/replay.log" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] || { cat "$work/replay.log"; echo "node/ci.sh: the replay line exited $status, expected 1"; exit 1; }
grep -q "ACC-FIDELITY" "$work/replay.log" || { cat "$work/replay.log"; echo "node/ci.sh: the replay does not show ACC-FIDELITY"; exit 1; }

echo "node/ci.sh: the correct accumulator must pass"
CASES=500 node --test toyacc.test.mjs

# The hostile tier's JavaScript mutants (node/examples/hostile), certified in openai-chat's
# hostile profile from the checkout (they import the package by its own name): each is
# killed, with the rule its bug breaks.
echo "node/ci.sh: the hostile mutants must be killed"
for pair in indexed:HOSTILE-POLLUTION assign:ACC-ACCOUNT; do
    mutant=${pair%%:*}
    rule=${pair#*:}
    set +e
    (cd "$repo" && "${TOOLCERT_BIN:-toolcert}" certify --subject "exec:node node/examples/hostile/$mutant.mjs" \
        --level wire --dialect openai-chat --profile hostile --cases 50) >"$work/hostile-$mutant.log" 2>&1
    status=$?
    set -e
    if [ "$status" -ne 1 ] || ! grep -q " $rule#" "$work/hostile-$mutant.log"; then
        cat "$work/hostile-$mutant.log"
        echo "node/ci.sh: the hostile mutant $mutant exited $status without a $rule finding"
        exit 1
    fi
    echo "node/ci.sh: hostile mutant $mutant killed ($rule)"
done
echo "node/ci.sh: ok"
