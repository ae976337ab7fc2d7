"""The strict parse and the writer: numbers kept as written, what RFC 8259 refuses refused."""
import pytest

from toolcert_adapter import JsonNumber, NotJson, dumps, loads, schema_errors

KEPT = [
    '{"a":1.0}',
    '{"a":12345678901234567890123}',
    '{"a":0.1000000000000000000001}',
    '{"a":-0}',
    '{"a":1E+2,"b":1e-400}',
    '{"a":9007199254740993}',
    '[1,2.50,"x",null,true,false,{}]',
]


@pytest.mark.parametrize("text", KEPT)
def test_numbers_are_written_back_as_written(text):
    assert dumps(loads(text)) == text


@pytest.mark.parametrize(
    "text",
    ['{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', '{"a": 1e400}', '{"a": "\\ud800"}',
     '{"\\udc00": 1}', '{"a": 1} x', '{"a": 1}{"b": 2}', "", "{", '{"a": 01}', "[" * 513 + "]" * 513],
)
def test_what_serde_json_refuses_is_refused(text):
    with pytest.raises(NotJson):
        loads(text)


def test_nesting_up_to_127_is_read():
    assert loads("[" * 127 + "]" * 127) is not None


def test_numbers_compare_by_exact_value():
    n = loads("0.1000000000000000000001")
    assert isinstance(n, JsonNumber) and n.literal == "0.1000000000000000000001"
    assert n != 0.1 and loads("1.0") == 1 and loads("1e2").is_integral()


def test_schema_bounds_and_types_use_exact_values():
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 2}}}
    assert schema_errors(schema, loads('{"n": 2.0}')) == []
    assert schema_errors(schema, loads('{"n": 1.5}')) != []
    assert schema_errors(False, 1) == ["/: no value is allowed"]


def test_dumps_refuses_what_json_cannot_hold():
    with pytest.raises(ValueError):
        dumps(float("nan"))
    with pytest.raises(TypeError):
        dumps({"a": object()})


def test_a_string_like_a_marker_stays_a_string():
    text = '{"a":"\\u0000x:0\\u0000","b":1.50}'
    assert dumps(loads(text)) == text
