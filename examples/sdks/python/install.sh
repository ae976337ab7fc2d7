#!/usr/bin/env bash
# Creates examples/sdks/python/.venv with the pinned SDKs the adapters certify
# (requirements.txt). Idempotent: re-running it re-syncs the venv to the pins.
#   PYTHON=python3.11 examples/sdks/python/install.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/.venv"
python="${PYTHON:-$(command -v python3.11 || command -v python3)}"

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "install.sh: $python is $("$python" --version 2>&1); the adapters need Python >= 3.11" >&2
    exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"
# The adapters are built on the toolcert-adapter package (python/ in this repository): its
# protocol loop and strict JSON. Reinstalled each time, so the venv follows the checkout.
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$here/../../../python"

# Import everything once: compiles the bytecode now, so that an adapter's first start stays
# well inside toolcert's request timeout (litellm alone takes seconds to import).
LITELLM_LOCAL_MODEL_COST_MAP=True "$venv/bin/python" - <<'PY'
from importlib.metadata import version
import anthropic, openai, langchain_core, langchain_openai, litellm, pydantic_ai, toolcert_adapter  # noqa: F401
import pydantic_ai.models.anthropic, pydantic_ai.models.openai  # noqa: F401
print("installed:", ", ".join(f"{p} {version(p)}" for p in
      ("anthropic", "openai", "langchain-core", "langchain-openai", "litellm", "pydantic-ai-slim", "httpx2", "toolcert-adapter")))
PY
