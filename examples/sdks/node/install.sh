#!/usr/bin/env bash
# Installs the pinned SDKs (package-lock.json) for the Node adapters. Needs Node.js >= 20 and npm.
set -eu
cd "$(dirname "$0")"
node -e 'const [major] = process.versions.node.split(".").map(Number); if (major < 20) { console.error(`Node.js ${process.version}: the adapters need >= 20`); process.exit(1); }'
npm ci --no-audit --no-fund --loglevel=error
node -e '
for (const p of ["openai", "@anthropic-ai/sdk", "ai", "@ai-sdk/openai", "@ai-sdk/anthropic"]) {
  const v = JSON.parse(require("fs").readFileSync(`node_modules/${p}/package.json`, "utf8")).version;
  console.log(`${p} ${v}`);
}'
