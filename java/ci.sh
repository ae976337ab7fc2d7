#!/usr/bin/env bash
# CI for the Java package: `mvn verify` of java/ (its own tests) and `mvn install` into the local
# repository, then the JUnit integration as a user meets it: java/examples/toyacc, copied outside
# the checkout and built against the installed artifact. The buggy toyacc adapter must fail under
# JUnit with its finding, reproducer and replay line (and the replay line must run as printed),
# the correct one must pass.
#
# The toolcert binary: $TOOLCERT_BIN, otherwise target/release/toolcert (built if missing).
# Maven downloads what it lacks on the first run; later runs read ~/.m2 (no -o needed).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [ -z "${TOOLCERT_BIN:-}" ]; then
    cargo build --release --quiet --bin toolcert
    export TOOLCERT_BIN=$repo/target/release/toolcert
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd java && mvn -q -B install)
echo "java/ci.sh: the package's tests pass and it is installed"

cp -r java/examples/toyacc "$work/project"
rm -rf "$work/project/target"
cd "$work/project"

echo "java/ci.sh: the buggy accumulator must fail"
set +e
TOYACC_FLAGS=--buggy CASES=200 mvn -B test >"$work/buggy.log" 2>&1
status=$?
set -e
grep -vE '^\[INFO\] (Download|Copying|Building|---|$)' "$work/buggy.log" | sed -n '1,120p'
[ "$status" -ne 0 ] || { echo "java/ci.sh: mvn test passed the buggy adapter"; exit 1; }
for want in "ACC-FIDELITY (must)" "urgent requestfrom ops" "reproducer: " "replay: toolcert certify" "Tests run:"; do
    grep -qF "$want" "$work/buggy.log" || { echo "java/ci.sh: the JUnit output lacks: $want"; exit 1; }
done
# The replay line runs as printed (with the binary for `toolcert`): it fails again.
replay=$(grep -m1 "replay: toolcert certify" "$work/buggy.log" | sed 's/^ *replay: toolcert //')
set +e
eval "\"\$TOOLCERT_BIN\" $replay" >"$work/replay.log" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] || { cat "$work/replay.log"; echo "java/ci.sh: the replay line exited $status, expected 1"; exit 1; }
grep -q "ACC-FIDELITY" "$work/replay.log" || { cat "$work/replay.log"; echo "java/ci.sh: the replay does not show ACC-FIDELITY"; exit 1; }

echo "java/ci.sh: the correct accumulator must pass"
CASES=500 mvn -q -B test
echo "java/ci.sh: ok"
