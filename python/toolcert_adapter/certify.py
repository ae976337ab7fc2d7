"""Runs the `toolcert` binary against an adapter and reads its findings: what the pytest
plugin (and any other runner) reports as failing tests.

The binary is `$TOOLCERT_BIN` when set, otherwise `toolcert` on PATH. `certify` runs
`toolcert certify --format json --out DIR` and returns a `Report` whose `findings` are the
report's `findings[]` when it has them, otherwise one finding per failing invariant built
from its `invariants[]` and `failures[]`; each carries its reproducer (the scenario file
`--out` wrote) and the command line that replays it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["ToolcertError", "Finding", "Report", "find_binary", "certify", "subject_name"]


class ToolcertError(RuntimeError):
    """toolcert could not be run, or refused the run (a usage or internal error)."""


def find_binary() -> str:
    """`$TOOLCERT_BIN`, otherwise `toolcert` on PATH; raises ToolcertError naming both."""
    env = os.environ.get("TOOLCERT_BIN")
    if env:
        if not (os.path.isfile(env) and os.access(env, os.X_OK)):
            raise ToolcertError(f"TOOLCERT_BIN={env} is not an executable file")
        return env
    found = shutil.which("toolcert")
    if found is None:
        raise ToolcertError(
            "the toolcert binary is not on PATH and TOOLCERT_BIN is not set "
            "(install it with `cargo install --path .` in a toolcert checkout, "
            "or point TOOLCERT_BIN at it)"
        )
    return found


def subject_name(subject: str) -> str:
    """`exec:CMD` for a bare command; `builtin:...` and `exec:...` unchanged."""
    if subject.startswith(("exec:", "builtin:")):
        return subject
    return f"exec:{subject}"


def _file_stem(case: str) -> str:
    # As the reproducers' names are made (toolcert_runner::report::file_stem).
    return "".join(c if (c.isascii() and c.isalnum()) or c in "-." else "_" for c in case)


@dataclass
class Finding:
    """One bug: the invariant it breaks, how often, its smallest reproducer, its replay."""

    invariant: str
    grade: str | None
    count: int
    case: str | None
    message: str
    replay: str | None
    reproducer: str | None = None
    id: str | None = None
    raw: dict = field(default_factory=dict)

    def __str__(self) -> str:
        head = f"{self.invariant}"
        if self.grade:
            head += f" ({self.grade})"
        if self.id:
            head += f" [{self.id}]"
        lines = [f"{head}: {self.count} failing case{'s' if self.count != 1 else ''}"]
        if self.case:
            lines.append(f"  smallest case: {self.case}")
        if self.message:
            lines.extend("  " + line for line in self.message.splitlines())
        if self.reproducer:
            lines.append(f"  reproducer: {self.reproducer}")
        if self.replay:
            lines.append(f"  replay: {self.replay}")
        return "\n".join(lines)


@dataclass
class Report:
    """A certification: its JSON summary, exit code and findings."""

    subject: str
    command: list[str]
    exit_code: int
    json: dict[str, Any]
    findings: list[Finding]
    out_dir: str

    @property
    def conforms(self) -> bool:
        return bool(self.json.get("conforms")) and not self.findings

    def invariants(self) -> list[dict]:
        """The rules of the run, each with its `id`, `status` (pass, fail or n/a) and `rule`."""
        return list(self.json.get("invariants") or [])

    def findings_for(self, invariant: str) -> list[Finding]:
        return [f for f in self.findings if f.invariant == invariant]

    def summary(self) -> str:
        lines = [
            f"{self.subject}: {'conforms' if self.conforms else 'DOES NOT CONFORM'} "
            f"({self.json.get('cases', '?')} cases, exit {self.exit_code})"
        ]
        lines.extend(str(f) for f in self.findings)
        return "\n".join(lines)

    def assert_conforms(self) -> None:
        """Raises AssertionError listing every finding with its reproducer and replay."""
        if not self.conforms:
            raise AssertionError(self.summary())


def _violation_text(v: dict) -> str:
    where = f"call {v['call_id']}" if v.get("call_id") else "the turn"
    return f"{where}: expected {v.get('expected')}; observed {v.get('observed')}"


def _setting_args(report: dict, subject: str) -> list[str]:
    # As toolcert_runner::Report::setting_args prints them.
    args = ["--subject", subject]
    level = report.get("level", "events")
    if level != "events":
        args += ["--level", level]
        if report.get("dialect"):
            args += ["--dialect", report["dialect"]]
        if report.get("chat_index_zero"):
            args.append("--chat-index-zero")
        if report.get("chat_repeat_fields"):
            args.append("--chat-repeat-fields")
    if report.get("schema") is False:
        args.append("--no-schema")
    if report.get("grade") == "must":
        args += ["--grade", "must"]
    return args


def _replay(report: dict, subject: str, case: str | None, generated, reproducer: str | None):
    base = ["toolcert", "certify", *_setting_args(report, subject)]
    if reproducer is not None:
        return shlex.join(base + ["--scenario", reproducer])
    if case is None:
        return None
    if generated:
        seed, k = generated
        return shlex.join(base + ["--seed", str(seed), "--cases", str(k + 1), "--case", case])
    return shlex.join(base + ["--case", case])


def _findings(report: dict, subject: str, out_dir: str) -> list[Finding]:
    failures = report.get("failures") or []

    def reproducer_of(case: str | None) -> str | None:
        if case is None:
            return None
        name = f"{_file_stem(case)}.json"
        path = Path(out_dir) / "failures" / name
        if path.exists():
            return str(path)
        # A run over several settings writes each setting's reproducers in a directory of its own.
        found = sorted(Path(out_dir).glob(f"*/failures/{name}"))
        return str(found[0]) if found else None

    if isinstance(report.get("findings"), list):
        # One entry per distinct bug: {id, invariant, grade, kind, title, cases, first_case,
        # reproducer: a failure kept in full {case, violations, transcript, scenario}, replay}.
        found = []
        for f in report["findings"]:
            kept = f.get("reproducer") if isinstance(f.get("reproducer"), dict) else None
            case = (kept or {}).get("case") or f.get("first_case") or f.get("case")
            lines = [f.get("title") or f.get("kind") or ""]
            if kept:
                mine = [v for v in kept.get("violations", []) if v.get("invariant") == f.get("invariant")]
                lines += [_violation_text(v) for v in mine or kept.get("violations", [])]
                if kept.get("transcript"):
                    lines.append("transcript:")
                    lines += ["  " + t for t in kept["transcript"].splitlines()]
            if f.get("first_case") and f.get("first_case") != case:
                lines.append(f"first seen in {f['first_case']}")
            reproducer = reproducer_of(case)
            found.append(
                Finding(
                    invariant=f.get("invariant", "?"),
                    grade=f.get("grade"),
                    count=int(f.get("cases") or f.get("count") or 1),
                    case=case,
                    message="\n".join(x for x in lines if x),
                    replay=f.get("replay")
                    or _replay(report, subject, case, (kept or {}).get("generated"), reproducer),
                    reproducer=reproducer,
                    id=f.get("id"),
                    raw=f,
                )
            )
        return found
    # Without findings[]: one finding per failing invariant, its first kept failure as the
    # reproducer.
    found = []
    for inv in report.get("invariants") or []:
        if inv.get("status") != "fail":
            continue
        iid = inv["id"]
        first = next(
            (fl for fl in failures if any(v.get("invariant") == iid for v in fl.get("violations", []))),
            None,
        )
        case = first["case"] if first else None
        lines = [inv.get("rule", "")]
        grade = None
        if first:
            mine = [v for v in first["violations"] if v.get("invariant") == iid]
            grade = mine[0].get("grade")
            lines += [_violation_text(v) for v in mine]
            if first.get("transcript"):
                lines.append("transcript:")
                lines += ["  " + t for t in first["transcript"].splitlines()]
        else:
            lines.append("(no failure of this rule kept in full: run with --show or a larger --out)")
        reproducer = reproducer_of(case)
        found.append(
            Finding(
                invariant=iid,
                grade=grade or ("must" if inv.get("must") == "fail" else "should"),
                count=int(inv.get("failures") or 0),
                case=case,
                message="\n".join(lines),
                replay=_replay(report, subject, case, first.get("generated") if first else None, reproducer),
                reproducer=reproducer,
                raw=inv,
            )
        )
    return found


def certify(
    subject: str,
    *,
    level: str | None = None,
    dialect: str | None = None,
    cases: int | None = None,
    seed: int | None = None,
    grade: str | None = None,
    schema: bool = True,
    case: str | None = None,
    args: list[str] | tuple[str, ...] = (),
    out_dir: str | os.PathLike | None = None,
    cwd: str | os.PathLike | None = None,
    timeout: float | None = None,
) -> Report:
    """Certifies `subject` (a command, or `exec:CMD` / `builtin:NAME`) with the toolcert
    binary and returns its report. Raises ToolcertError when toolcert cannot run or refuses
    the options (exit 2 or 5), naming what it said."""
    subject = subject_name(subject)
    binary = find_binary()
    out = str(out_dir) if out_dir is not None else tempfile.mkdtemp(prefix="toolcert-")
    command = [binary, "certify", "--subject", subject, "--format", "json", "--out", out]
    if level:
        command += ["--level", level]
    if dialect:
        command += ["--dialect", dialect]
    if cases is not None:
        command += ["--cases", str(cases)]
    if seed is not None:
        command += ["--seed", str(seed)]
    if grade:
        command += ["--grade", grade]
    if not schema:
        command.append("--no-schema")
    if case:
        command += ["--case", case]
    command += list(args)
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolcertError(f"running {shlex.join(command)}: {e}") from e
    if done.returncode not in (0, 1, 3, 4):
        raise ToolcertError(
            f"{shlex.join(command)} exited {done.returncode}: {done.stderr.strip() or done.stdout.strip()}"
        )
    try:
        report = json.loads(done.stdout)
    except ValueError as e:
        raise ToolcertError(f"{shlex.join(command)} did not print a JSON report: {e}") from e
    return Report(
        subject=subject,
        command=command,
        exit_code=done.returncode,
        json=report,
        findings=_findings(report, subject, out),
        out_dir=out,
    )
