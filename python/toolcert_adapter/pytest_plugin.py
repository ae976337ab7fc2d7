"""pytest integration: certify an adapter with the `toolcert` binary and report each
finding as a failing test, with its reproducer and replay line.

Enabled automatically when the package is installed (a `pytest11` entry point). Two ways in:

    # test_adapter.py: one test per invariant of the run; a broken one fails with its findings
    from toolcert_adapter.pytest_plugin import certify_tests
    test_my_accumulator = certify_tests("python3 adapter.py", cases=300)

    # or by hand, with the fixture
    def test_conforms(toolcert):
        toolcert.certify("python3 adapter.py", level="bytes", dialect="openai-chat").assert_conforms()

`certify_tests` runs the certification once when pytest collects the file (so `pytest
--collect-only` runs it too), then makes one test per invariant: pass, fail with the
findings, or skipped for a rule no case of the run could break (`n/a`). The binary is
`$TOOLCERT_BIN` or `toolcert` on PATH.
"""

from __future__ import annotations

import functools

import pytest

from .certify import Report, ToolcertError, certify

__all__ = ["certify_tests", "toolcert", "Toolcert"]


class Toolcert:
    """The `toolcert` fixture: `certify(...)` runs the binary and returns a Report."""

    def __init__(self, tmp_path):
        self._tmp = tmp_path
        self._runs = 0

    def certify(self, subject: str, **options) -> Report:
        self._runs += 1
        options.setdefault("out_dir", self._tmp / f"toolcert-{self._runs}")
        return certify(subject, **options)


@pytest.fixture
def toolcert(tmp_path) -> Toolcert:
    return Toolcert(tmp_path)


@functools.lru_cache(maxsize=None)
def _run(subject: str, frozen: tuple) -> Report | ToolcertError:
    try:
        return certify(subject, **dict(frozen))
    except ToolcertError as e:
        return e


def certify_tests(subject: str, **options):
    """A test function parametrized over the invariants of one certification of `subject`
    (keyword options as `certify` takes them). Assign it to a `test_...` name."""
    frozen = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))
    result = _run(subject, frozen)
    if isinstance(result, ToolcertError):
        def test_toolcert_runs():
            pytest.fail(str(result), pytrace=False)

        return test_toolcert_runs
    report = result
    rules = report.invariants()
    ids = [r["id"] for r in rules]
    # Findings the report has for a rule it does not list still fail a test of their own.
    ids += sorted({f.invariant for f in report.findings} - set(ids))
    if not ids:
        ids = ["conformance"]
    status = {r["id"]: r.get("status") for r in rules}

    @pytest.mark.parametrize("invariant", ids)
    def test_invariant(invariant):
        findings = report.findings_for(invariant) if invariant != "conformance" else report.findings
        if findings:
            pytest.fail("\n\n".join(str(f) for f in findings), pytrace=False)
        if status.get(invariant) == "fail":
            pytest.fail(f"{invariant} fails ({report.subject}); see {report.out_dir}", pytrace=False)
        if invariant == "conformance" and not report.conforms:
            pytest.fail(report.summary(), pytrace=False)
        if status.get(invariant) == "n/a":
            pytest.skip(f"{invariant}: n/a, no case of this run could break it")

    test_invariant.__doc__ = f"toolcert certify {report.subject}"
    return test_invariant
