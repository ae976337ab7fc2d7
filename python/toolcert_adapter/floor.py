"""The cost floor of a Python accumulator, for `toolcert bench`: the package's reference
(`reference.Core`: each call's fragments joined, one strict parse at the end; the wire and
bytes levels through the package's SSE and dialect decoders), served over the protocol at
every level, dialect and quirk profile.

    python3 -m toolcert_adapter.floor

`toolcert bench --subject exec:'python3 my_adapter.py'` runs it beside your adapter (in
the same interpreter) and prices your accumulator as a multiple of it.
"""

import sys

from .protocol import QUIRKS, serve
from .reference import reference_levels


def main() -> int:
    return serve(
        name="toolcert-adapter-floor",
        quirks=QUIRKS,
        **reference_levels(),
    )


if __name__ == "__main__":
    sys.exit(main())
