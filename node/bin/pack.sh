#!/usr/bin/env bash
# Packs the `toolcert` binary as an npm package for this platform, the npm counterpart of the
# Python wheel (python/bin): `npm install toolcert-cli-<os>-<cpu>-0.1.0.tgz` puts `toolcert`
# in node_modules/.bin, where the node:test helper finds it (npm puts .bin on PATH for
# scripts and npx). One package per platform, as esbuild ships its binaries; `os` and `cpu`
# make npm refuse it elsewhere.
#
#     bash node/bin/pack.sh [BINARY] [OUT_DIR]    # default: target/release/toolcert, .
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
binary=${1:-$repo/target/release/toolcert}
out=$(cd "${2:-.}" && pwd)
[ -x "$binary" ] || { echo "node/bin/pack.sh: $binary is not an executable (cargo build --release --bin toolcert)"; exit 2; }
os=$(node -p 'process.platform')
cpu=$(node -p 'process.arch')
version=$("$binary" --version | awk '{print $2}')
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$binary" "$stage/toolcert"
strip "$stage/toolcert" 2>/dev/null || true
cat >"$stage/package.json" <<JSON
{
  "name": "toolcert-cli-$os-$cpu",
  "version": "$version",
  "description": "The toolcert binary for $os $cpu: certifies streaming tool-call accumulators",
  "license": "MIT OR Apache-2.0",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "bin": { "toolcert": "toolcert" },
  "files": ["toolcert"]
}
JSON
(cd "$stage" && npm pack --silent --pack-destination "$out" >/dev/null)
ls "$out"/toolcert-cli-"$os"-"$cpu"-"$version".tgz
