"""Reading a report into findings: `findings[]` when the report has it, otherwise one per
failing invariant from `invariants[]` and `failures[]`; the reproducer file when --out wrote it."""
from toolcert_adapter.certify import _findings

VIOLATION = {"invariant": "ACC-FIDELITY", "grade": "must", "call_id": "c1", "expected": "A", "observed": "B"}
FAILURE = {"case": "named/x/y", "violations": [VIOLATION], "transcript": "call_start {}\n", "scenario": {}}
BASE = {"subject": "exec:x", "level": "bytes", "dialect": "openai-chat", "schema": False, "grade": "should"}


def test_findings_are_read_when_the_report_has_them(tmp_path):
    (tmp_path / "failures").mkdir()
    (tmp_path / "failures" / "named_x_y.json").write_text("{}")
    report = dict(BASE, findings=[{
        "id": "ACC-FIDELITY#1", "invariant": "ACC-FIDELITY", "grade": "must", "kind": "k",
        "title": "ACC-FIDELITY (must): k", "cases": 3, "first_case": "gen/1/4",
        "reproducer": FAILURE, "replay": "toolcert certify --case named/x/y",
    }])
    f, = _findings(report, "exec:x", str(tmp_path))
    assert (f.invariant, f.grade, f.count, f.case, f.id) == ("ACC-FIDELITY", "must", 3, "named/x/y", "ACC-FIDELITY#1")
    assert f.replay == "toolcert certify --case named/x/y"
    assert f.reproducer == str(tmp_path / "failures" / "named_x_y.json")
    assert "expected A; observed B" in str(f) and "first seen in gen/1/4" in str(f)


def test_without_findings_each_failing_invariant_is_one(tmp_path):
    report = dict(BASE, failures=[dict(FAILURE, generated=[7, 4])], invariants=[
        {"id": "ACC-FIDELITY", "status": "fail", "must": "fail", "failures": 2, "rule": "r"},
        {"id": "ACC-ORDER", "status": "pass", "failures": 0, "rule": "r"},
        {"id": "WIRE-DONE", "status": "n/a", "failures": 0, "rule": "r"},
    ])
    f, = _findings(report, "exec:x", str(tmp_path))
    assert (f.invariant, f.grade, f.count, f.reproducer) == ("ACC-FIDELITY", "must", 2, None)
    assert f.replay == (
        "toolcert certify --subject exec:x --level bytes --dialect openai-chat --no-schema "
        "--seed 7 --cases 5 --case named/x/y"
    )
