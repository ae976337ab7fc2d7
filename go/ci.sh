#!/usr/bin/env bash
# CI for the Go package: gofmt, `go vet` and its own tests (which certify the reference
# accumulator and decoders at every level, dialect and profile), then the `go test`
# integration as a user meets it, in a copy of the toyacc example outside the checkout (its go.mod's `replace`
# pointed at this checkout's go/): the buggy accumulator must fail under `go test` with its
# finding, reproducer and replay line (and the replay line must run as printed), the
# correct one must pass.
#
# The toolcert binary: $TOOLCERT_BIN, otherwise target/release/toolcert (built if missing).
# Go modules: the package uses the standard library only, so nothing is downloaded.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [ -z "${TOOLCERT_BIN:-}" ]; then
    cargo build --release --quiet --bin toolcert
    export TOOLCERT_BIN=$repo/target/release/toolcert
fi
command -v go >/dev/null || { echo "go/ci.sh: no go command on PATH"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The binaries toolcert.Build makes and the reproducers toolcert.Certify keeps (for the
# replay lines) go to the user's cache and temporary directories: here, inside the work dir.
# The go command's own build cache stays where it is.
export GOCACHE="$(go env GOCACHE)"
export XDG_CACHE_HOME="$work/cache" TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"

unformatted=$(gofmt -l go)
[ -z "$unformatted" ] || { echo "go/ci.sh: not gofmt-formatted: $unformatted"; exit 1; }
(cd go && go vet ./... && go test -count=1 ./...)

# A user's project: the example, outside the checkout.
cp -r go/examples/toyacc "$work/project"
cd "$work/project"
go mod edit -replace "github.com/toolcert/toolcert/go=$repo/go"
go vet ./...

echo "go/ci.sh: the buggy accumulator must fail"
set +e
TOYACC_FLAGS=--buggy CASES=200 go test -count=1 ./... >"$work/buggy.log" 2>&1
status=$?
set -e
cat "$work/buggy.log"
[ "$status" -eq 1 ] || { echo "go/ci.sh: go test exited $status on the buggy adapter, expected 1"; exit 1; }
for want in "--- FAIL: TestToyacc/ACC-FIDELITY" "ACC-FIDELITY (must)" "urgent requestfrom ops" "reproducer: " "replay: toolcert certify"; do
    grep -qF -- "$want" "$work/buggy.log" || { echo "go/ci.sh: the go test output lacks: $want"; exit 1; }
done
# The replay line runs as printed (with the binary for `toolcert`): it fails again.
replay=$(grep -m1 "replay: toolcert certify" "$work/buggy.log" | sed 's/^ *replay: toolcert //')
set +e
eval "\"\$TOOLCERT_BIN\" $replay" >"$work/replay.log" 2>&1
status=$?
set -e
[ "$status" -eq 1 ] || { cat "$work/replay.log"; echo "go/ci.sh: the replay line exited $status, expected 1"; exit 1; }
grep -q "ACC-FIDELITY" "$work/replay.log" || { cat "$work/replay.log"; echo "go/ci.sh: the replay does not show ACC-FIDELITY"; exit 1; }

echo "go/ci.sh: the correct accumulator must pass"
CASES=500 go test -count=1 -v ./... >"$work/correct.log" 2>&1 || { cat "$work/correct.log"; echo "go/ci.sh: go test failed on the correct adapter"; exit 1; }
grep -E '^(--- |ok|PASS)' "$work/correct.log"
grep -q -- "--- PASS: TestToyacc/ACC-FIDELITY" "$work/correct.log" || { echo "go/ci.sh: ACC-FIDELITY did not run and pass"; exit 1; }
echo "go/ci.sh: ok"
