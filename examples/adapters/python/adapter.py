#!/usr/bin/env python3
"""A toolcert adapter in Python: the reference accumulator of the `toolcert-adapter`
package, served at every level and dialect.

    pip install ./python      # once; from a checkout it is found without installing
    toolcert certify --subject 'exec:python3 examples/adapters/python/adapter.py'

To certify your own library, give `serve` your accumulator's factories instead (README.md
beside this file shows one in twenty lines).
"""

import sys
from pathlib import Path

try:
    import toolcert_adapter  # noqa: F401
except ImportError:  # run from a checkout without `pip install ./python`
    sys.path.append(str(Path(__file__).resolve().parents[3] / "python"))

from toolcert_adapter import QUIRKS, serve
from toolcert_adapter.reference import Core, reference_levels

if __name__ == "__main__":
    sys.exit(
        serve(
            name="toolcert-adapter-python",
            version="0.1.0",
            # The package's decoders read every server profile of their dialects alike.
            quirks=QUIRKS,
            schema=True,
            **reference_levels(Core),
        )
    )
