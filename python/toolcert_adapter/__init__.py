"""toolcert-adapter: write a toolcert subject in Python in about twenty lines.

toolcert (https://github.com/toolcert/toolcert) certifies streaming tool-call accumulators.
An accumulator in another language is certified as a subprocess speaking toolcert's
protocol (docs/PROTOCOL.md); this package is that protocol's adapter side:

- `serve(...)`: the protocol loop (start, configure, run, stop), around your accumulator;
- `Emit`, `TurnError`, `Skip` and the outcome constructors `dispatchable`, `schema_error`,
  `failed`: what an accumulator reports;
- `loads` / `dumps`: strict JSON that keeps every number exactly as written (`JsonNumber`);
- `reference`: a correct accumulator and the dialect and SSE decoders, to lift an
  events-level accumulator to the wire and bytes levels;
- `certify` (and the pytest plugin, `toolcert_adapter.pytest_plugin`): run the `toolcert`
  binary against an adapter and read its findings.
"""

from .protocol import (
    CAPS,
    DIALECTS,
    ENDINGS,
    ERROR_CLASSES,
    LEVELS,
    PROTOCOL_VERSION,
    QUIRKS,
    TRUNCATING,
    Config,
    Emit,
    Skip,
    TurnError,
    dispatchable,
    failed,
    malformed,
    run_case,
    schema_error,
    serve,
)
from .pollution import PollutionWatch
from .strict_json import JsonNumber, NotJson, dumps, json_equal, loads, schema_errors

__version__ = "0.1.0"

__all__ = [
    "CAPS",
    "DIALECTS",
    "ENDINGS",
    "ERROR_CLASSES",
    "LEVELS",
    "PROTOCOL_VERSION",
    "QUIRKS",
    "TRUNCATING",
    "Config",
    "Emit",
    "JsonNumber",
    "NotJson",
    "PollutionWatch",
    "Skip",
    "TurnError",
    "dispatchable",
    "dumps",
    "failed",
    "json_equal",
    "loads",
    "malformed",
    "run_case",
    "schema_error",
    "schema_errors",
    "serve",
]
