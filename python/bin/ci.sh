#!/usr/bin/env bash
# CI for the binary wheel: builds the `toolcert` wheel with maturin (bindings = "bin") from
# the workspace, then runs python/ci.sh with it installed into the fresh venv instead of a
# TOOLCERT_BIN, so the pytest integration finds the binary on PATH as a user without a Rust
# toolchain would. The release build of `.ci/run` is reused: only the root crate recompiles.
# (For a wheel to publish: --profile dist --strip; every crate is rebuilt with fat LTO.)
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

started=$SECONDS
python3 -m venv "$work/maturin"
"$work/maturin/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2"
(cd python/bin && "$work/maturin/bin/maturin" build --release --quiet --out "$work/wheels")
wheel=$(ls "$work"/wheels/toolcert-*.whl)
echo "python/bin/ci.sh: built $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) in $((SECONDS - started)) s"
TOOLCERT_WHEEL=$wheel bash python/ci.sh
