#!/usr/bin/env bash
# Builds the Go SDK adapters into examples/sdks/go/bin/, with the SDK versions pinned in
# go.mod (and their checksums in go.sum): github.com/openai/openai-go/v3,
# github.com/anthropics/anthropic-sdk-go/v2, github.com/sashabaranov/go-openai. The modules
# come from the Go module proxy (GOPROXY), the toolcert Go package from the checkout's go/
# (a `replace`). Idempotent: re-running it rebuilds what changed.
#   examples/sdks/go/install.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
command -v go >/dev/null || { echo "install.sh: no go command on PATH" >&2; exit 1; }
go mod download
go vet ./...
go build -o bin/ ./cmd/...
echo "install.sh: built $(ls bin | tr '\n' ' ')($(go version | cut -d' ' -f3))"
