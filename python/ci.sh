#!/usr/bin/env bash
# CI for the Python package: in a fresh venv, `pip install ./python` from the checkout, its
# own tests, then the pytest integration as a user meets it: the buggy toyacc adapter must
# fail under pytest with its finding, reproducer and replay line (and the replay line must
# run as printed), the correct one must pass.
#
# The toolcert binary: with TOOLCERT_WHEEL=FILE, the wheel python/bin builds, installed into
# the venv (the plugin then finds `toolcert` on the venv's PATH, as a user without Rust
# would); otherwise $TOOLCERT_BIN, otherwise target/release/toolcert (built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [ -n "${TOOLCERT_WHEEL:-}" ]; then
    unset TOOLCERT_BIN
elif [ -z "${TOOLCERT_BIN:-}" ]; then
    cargo build --release --quiet --bin toolcert
    export TOOLCERT_BIN=$repo/target/release/toolcert
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check ./python pytest ${TOOLCERT_WHEEL:+"$TOOLCERT_WHEEL"}
if [ -n "${TOOLCERT_WHEEL:-}" ]; then
    echo "python/ci.sh: toolcert from the wheel: $("$work/venv/bin/toolcert" --version 2>&1 || true)"
fi
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider python/tests

# A user's project: the example adapter and its test, outside the checkout.
mkdir "$work/project"
cp python/examples/toyacc.py python/examples/adapter.py python/examples/test_toyacc.py "$work/project/"
cd "$work/project"
export PATH="$work/venv/bin:$PATH"

echo "python/ci.sh: the buggy accumulator must fail"
set +e
TOYACC_FLAGS=--buggy CASES=200 pytest -q -p no:cacheprovider test_toyacc.py >"$work/buggy.log" 2>&1
status=$?
set -e
cat "$work/buggy.log"
[ "$status" -eq 1 ] || { echo "python/ci.sh: pytest exited $status on the buggy adapter, expected 1"; exit 1; }
for want in "FAILED test_toyacc.py::test_toyacc[ACC-FIDELITY]" "urgent requestfrom ops" "reproducer: " "replay: toolcert certify"; do
    grep -qF "$want" "$work/buggy.log" || { echo "python/ci.sh: the pytest output lacks: $want"; exit 1; }
done
# The replay line runs as printed (with the binary for `toolcert`): it fails again.
replay=$(grep -m1 "replay: toolcert certify" "$work/buggy.log" | sed 's/^ *replay: toolcert //')
set +e
eval "\"\${TOOLCERT_BIN:-toolcert}\" $replay" >"$work/replay.log" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] || { cat "$work/replay.log"; echo "python/ci.sh: the replay line exited $status, expected 1"; exit 1; }
grep -q "ACC-FIDELITY" "$work/replay.log" || { cat "$work/replay.log"; echo "python/ci.sh: the replay does not show ACC-FIDELITY"; exit 1; }

echo "python/ci.sh: the correct accumulator must pass"
CASES=500 pytest -q -p no:cacheprovider test_toyacc.py
echo "python/ci.sh: ok"
