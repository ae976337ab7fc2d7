"""Strict JSON for adapters: the parse an accumulator makes at dispatch, and the writer of
replies.

`loads` reads exactly one JSON document (RFC 8259) as strictly as serde_json, the oracle's
parser, reads it: no `NaN`/`Infinity`, no lone surrogates from `\\u` escapes, nothing after
the document, at most 127 levels of nesting, numbers that overflow a double refused. Every
number comes back as a `JsonNumber`, which keeps the literal the model wrote, and `dumps`
writes it back as written: a dispatched argument keeps its exact decimal value
(`12345678901234567890`, `0.1000000000000000000001`) and its spelling (`1.0` stays `1.0`).

`schema_errors` is a small JSON Schema validator for the keywords tool schemas use.
"""

from __future__ import annotations

import json as _json
import math
import re
import secrets
from decimal import Decimal, InvalidOperation

__all__ = ["JsonNumber", "NotJson", "loads", "dumps", "json_equal", "schema_errors", "MAX_DEPTH"]


class NotJson(ValueError):
    """The text is not exactly one JSON document."""


class JsonNumber(Decimal):
    """A JSON number that keeps the literal it was read from.

    It is a `Decimal`, so it compares and computes by exact value (`JsonNumber("1.0") == 1`,
    no binary rounding), and `dumps` writes `literal` back unchanged. `int(n)` and `float(n)`
    convert it when your code needs a native number."""

    __slots__ = ("literal",)

    def __new__(cls, literal: str):
        self = Decimal.__new__(cls, literal)
        self.literal = literal
        return self

    def __repr__(self) -> str:
        return f"JsonNumber({self.literal!r})"

    def __str__(self) -> str:
        return self.literal

    def is_integral(self) -> bool:
        """Whether the value is a whole number (`1`, `1.0`, `1e2`), as JSON Schema's
        `integer` type means it."""
        if self.as_tuple().exponent >= 0:  # type: ignore[operator]
            return True
        try:
            return self == self.to_integral_value()
        except InvalidOperation:
            return False


def _number(text: str) -> JsonNumber:
    # serde_json refuses a number that overflows a double (1e400); everything else it
    # reads, and the harness reads this literal back the same way.
    if math.isinf(float(text)):
        raise NotJson(f"number out of range: {text[:40]}")
    return JsonNumber(text)


def _refuse_constant(name: str):
    # json.loads accepts NaN, Infinity and -Infinity; RFC 8259 does not.
    raise NotJson(f"{name} is not JSON")


_SURROGATE = re.compile("[\ud800-\udfff]")
# A lone surrogate can only come from an escape: \uD800 to \uDFFF.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
# Documents nested up to 512 levels parse, as the harness's oracle parses them (docs/SPEC.md,
# "Generated space"); a deeper one is refused.
MAX_DEPTH = 513


def _needs_check(text: str) -> bool:
    """Whether the parsed value of `text` may hold a lone surrogate or nest too deeply."""
    return (
        text.count("[") + text.count("{") >= MAX_DEPTH - 1
        or _SURROGATE_ESCAPE.search(text) is not None
    )


def _check_tree(value) -> None:
    """Refuses what json.loads lets through but RFC 8259 text cannot mean: lone surrogates
    (from `\\ud800` escapes) and nesting deeper than serde_json reads."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            if not v.isascii() and _SURROGATE.search(v):
                raise NotJson("lone surrogate in a string")
        elif isinstance(v, list):
            if depth + 1 >= MAX_DEPTH:
                raise NotJson("nested too deeply")
            stack.extend((x, depth + 1) for x in v)
        elif isinstance(v, dict):
            if depth + 1 >= MAX_DEPTH:
                raise NotJson("nested too deeply")
            for k, x in v.items():
                if not k.isascii() and _SURROGATE.search(k):
                    raise NotJson("lone surrogate in a key")
                stack.append((x, depth + 1))


def loads(text: str, *, numbers: bool = True):
    """Exactly one JSON document (RFC 8259), as strictly as serde_json reads it; raises
    `NotJson` (a `ValueError`) otherwise. Numbers are `JsonNumber`s (with `numbers=False`,
    Python's `int` and `float`, for payloads whose numbers are only indices)."""
    try:
        if numbers:
            value = _json.loads(
                text, parse_constant=_refuse_constant, parse_int=_number, parse_float=_number
            )
        else:
            value = _json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as e:
        raise NotJson("nested too deeply") from e
    except NotJson:
        raise
    except ValueError as e:
        raise NotJson(str(e)) from None
    if _needs_check(text):
        _check_tree(value)
    return value


# Replies are written by the C encoder. It cannot write a number's literal itself, so each
# JsonNumber (or Decimal) goes out as a marker string, replaced by the literal afterwards; the
# random nonce keeps a string of the arguments from ever looking like a marker.
_NONCE = secrets.token_hex(8)
_MARKER = re.compile('"\\\\u0000' + _NONCE + ':([0-9]+)\\\\u0000"')


def dumps(value) -> str:
    """Compact JSON text of `value`: `JsonNumber`s (and `Decimal`s) as written, floats by
    `repr` (the shortest text that reads back as the same double), non-ASCII kept.
    Raises ValueError for NaN or an infinity and TypeError for what JSON cannot hold."""
    literals: list[str] = []

    def number(o):
        if isinstance(o, Decimal):
            if not o.is_finite():
                raise ValueError(f"{o!r} is not JSON")
            literals.append(o.literal if isinstance(o, JsonNumber) else str(o))
            return f"\x00{_NONCE}:{len(literals) - 1}\x00"
        raise TypeError(f"{type(o).__name__} is not JSON")

    text = _json.JSONEncoder(
        ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=number
    ).encode(value)
    if literals:
        text = _MARKER.sub(lambda m: literals[int(m.group(1))], text)
    return text


def _is_number(v) -> bool:
    return isinstance(v, (int, float, Decimal)) and not isinstance(v, bool)


def json_equal(a, b) -> bool:
    """JSON equality: numbers by exact value, booleans never equal to numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _integral(v) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return True
    if isinstance(v, float):
        return v.is_integer()
    if isinstance(v, JsonNumber):
        return v.is_integral()
    if isinstance(v, Decimal):
        return v.is_finite() and v == v.to_integral_value()
    return False


def _type_ok(t: str, v) -> bool:
    if t == "string":
        return isinstance(v, str)
    if t == "integer":
        return _integral(v)
    if t == "number":
        return _is_number(v)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "null":
        return v is None
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    return True


def schema_errors(schema, value, path: str = "") -> list[str]:
    """Validates `value` against a JSON Schema, for the keywords tool schemas use: type,
    enum, const, properties, required, additionalProperties, items, min/maxLength,
    min/maxItems, minimum, maximum, exclusiveMinimum, exclusiveMaximum, anyOf, allOf, not.
    Other keywords are ignored (use the `jsonschema` package for full coverage). Returns one
    message per violation, empty when it holds."""
    if schema is False:
        return [f"{path or '/'}: no value is allowed"]
    if schema is True or not isinstance(schema, dict):
        return []
    errors: list[str] = []
    where = path or "/"
    t = schema.get("type")
    if isinstance(t, str) and not _type_ok(t, value):
        errors.append(f"{where}: not of type {t}")
    elif isinstance(t, list) and not any(_type_ok(x, value) for x in t if isinstance(x, str)):
        errors.append(f"{where}: not of any type {t}")
    if isinstance(schema.get("enum"), list) and not any(
        json_equal(value, x) for x in schema["enum"]
    ):
        errors.append(f"{where}: not one of the enum values")
    if "const" in schema and not json_equal(value, schema["const"]):
        errors.append(f"{where}: not the constant")
    if isinstance(value, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        for key in schema.get("required") or []:
            if isinstance(key, str) and key not in value:
                errors.append(f"{where}: required property {key!r} is missing")
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in props:
                errors.extend(schema_errors(props[key], v, f"{path}/{key}"))
            elif extra is False:
                errors.append(f"{where}: additional property {key!r}")
            elif isinstance(extra, dict):
                errors.extend(schema_errors(extra, v, f"{path}/{key}"))
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, (dict, bool)):
            for i, v in enumerate(value):
                errors.extend(schema_errors(items, v, f"{path}/{i}"))
        if isinstance(schema.get("minItems"), int) and len(value) < schema["minItems"]:
            errors.append(f"{where}: fewer than {schema['minItems']} items")
        if isinstance(schema.get("maxItems"), int) and len(value) > schema["maxItems"]:
            errors.append(f"{where}: more than {schema['maxItems']} items")
    if isinstance(value, str):
        if isinstance(schema.get("minLength"), int) and len(value) < schema["minLength"]:
            errors.append(f"{where}: shorter than {schema['minLength']}")
        if isinstance(schema.get("maxLength"), int) and len(value) > schema["maxLength"]:
            errors.append(f"{where}: longer than {schema['maxLength']}")
    if _is_number(value):
        for key, bad in (
            ("minimum", lambda v, b: v < b),
            ("maximum", lambda v, b: v > b),
            ("exclusiveMinimum", lambda v, b: v <= b),
            ("exclusiveMaximum", lambda v, b: v >= b),
        ):
            bound = schema.get(key)
            if _is_number(bound) and bad(value, bound):
                errors.append(f"{where}: {key} {bound}")
    if isinstance(schema.get("allOf"), list):
        for sub in schema["allOf"]:
            errors.extend(schema_errors(sub, value, path))
    if isinstance(schema.get("anyOf"), list) and not any(
        not schema_errors(sub, value, path) for sub in schema["anyOf"]
    ):
        errors.append(f"{where}: matches none of anyOf")
    if "not" in schema and not schema_errors(schema["not"], value, path):
        errors.append(f"{where}: matches the `not` schema")
    return errors
