#!/usr/bin/env python3
"""Replays a sample of the published findings against the pinned SDKs: each must still fail as
stated.

The certification site (docs/site, its front grid docs/CERTIFICATION.md) shows, per SDK, the bugs
of the committed reports (docs/certification/reports/*.jsonl, footers' `bugs[]` grouping their
`findings[]`), each finding with its smallest reproducer,
saved by `certify --out` as corpus/findings/SDK/DIALECT[--QUIRK]/POLICY/failures/CASE.json. This
picks a sample of them, re-runs each reproducer with `toolcert certify --scenario` at the
report's setting against the report's own subject (the pinned SDK, as installed by
examples/sdks/*/install.sh), and checks that the finding's signature (its id: invariant, grade
and what went wrong) is among the findings of that run. A reproducer that now passes, or fails
some other way, means the SDK, the adapter or toolcert changed under the published document:
regenerate it (examples/sdks/certify-all.sh) or find out why.

The sample, deterministic: for each SDK and dialect whose subject is installed here, the
must-grade finding with the smallest reproducer (fewest events, then bytes, then id) over all
its reports (policies and quirk profiles), or the smallest should-grade one when none is must,
replayed at the setting of the report it came from; `--per-report N` takes N findings of every
report instead. `--only WORD` keeps the reports whose name contains every WORD given.

    TOOLCERT=target/release/toolcert examples/sdks/replay-findings.py [--per-report N] [--only WORD ...]

Exit status: 0 every sampled finding replays as stated, 1 one does not, 2 usage error, no
toolcert binary, or no finding to replay.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
REPORTS = ROOT / "docs" / "certification" / "reports"
CORPUS = ROOT / "corpus" / "findings"
TIMEOUT = os.environ.get("TIMEOUT", "180")


def read(path: pathlib.Path) -> tuple[dict, dict]:
    # JSONL lines end at "\n" only: a string may hold U+2028, which splitlines() would cut at.
    lines = [l for l in path.read_text(encoding="utf-8").split("\n") if l]
    return json.loads(lines[0]), json.loads(lines[-1])


def installed(command: str) -> bool:
    """Whether the program a subject command starts, and the script it runs, are here."""
    words = [w for w in command.split() if not w.startswith("-") and "=" not in w]
    if not words:
        return False
    program = words[0]
    if program == "env":
        words = words[1:]
        program = words[0] if words else ""
    if program == "node":
        need = [ROOT / "examples/sdks/node/node_modules"] + [ROOT / w for w in words[1:2]]
    else:
        need = [ROOT / program] + [ROOT / w for w in words[1:2] if w.endswith((".py", ".mjs"))]
    return all(p.exists() for p in need)


def stale_reports() -> set[str]:
    """The reports docs/certification/stale.txt lists: judged by an older suite (check-digests.sh)."""
    path = ROOT / "docs" / "certification" / "stale.txt"
    if not path.exists():
        return set()
    return {l.strip() for l in path.read_text(encoding="utf-8").splitlines() if l.strip() and not l.startswith("#")}


def saved(report: pathlib.Path, case: str) -> pathlib.Path:
    """Where certify-all.sh's --out put the reproducer of `case` for this report."""
    sdk, _, rest = report.stem.partition("--")
    column, _, policy = rest.rpartition("--")
    stem = re.sub(r"[^A-Za-z0-9.-]", "_", case)  # crates/runner/src/report.rs file_stem
    return CORPUS / sdk / column / policy / "failures" / f"{stem}.json"


def sample(findings: list[dict], per_report: int) -> list[dict]:
    """The `per_report` smallest findings, must-grade ones first."""
    return sorted(findings, key=size)[:per_report]


def replay(toolcert: str, header: dict, scenario: pathlib.Path) -> tuple[set[str] | None, str]:
    cmd = [toolcert, "certify", "--subject", header["subject"]["name"], "--level", header["level"],
           "--scenario", str(scenario), "--format", "jsonl", "--timeout", TIMEOUT]
    if header.get("dialect"):
        cmd += ["--dialect", header["dialect"]]
    # The server profile the report was run in (reports from before the profiles: their flag).
    if header.get("profile"):
        cmd += ["--profile", header["profile"]]
    for quirk in ("chat_index_zero", "chat_repeat_fields"):
        if header.get(quirk):
            cmd.append("--" + quirk.replace("_", "-"))
    if not header.get("schema"):
        cmd.append("--no-schema")
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    lines = [l for l in run.stdout.split("\n") if l]
    if run.returncode not in (0, 1) or not lines:
        return None, f"exit {run.returncode}: {run.stderr.strip()[-400:]}"
    # `--scenario` prints the case's own record: its violations' signatures are the findings.
    ids = set()
    for line in lines:
        record = json.loads(line)
        ids |= {f["id"] for f in record.get("findings", [])}
        ids |= {finding_id(v["invariant"], v["grade"], v.get("kind", "")) for v in record.get("violations", [])}
    return ids, ""


def finding_id(invariant: str, grade: str, kind: str) -> str:
    """A finding's id from its signature, as crates/runner/src/findings.rs `Signature::id`
    makes it (FNV-1a, 32 bits, over invariant, grade and kind, each after a NUL)."""
    h = 0x811C9DC5
    for b in invariant.encode() + b"\0" + grade.encode() + b"\0" + kind.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return f"{invariant}#{h:08x}"


def size(f: dict) -> tuple:
    s = f.get("size") or {}
    return (f["grade"] != "must", s.get("events", 1 << 30), s.get("bytes", 1 << 30), f["id"])


def main(argv: list[str]) -> int:
    per_report, only = 0, []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--per-report" and args and args[0].isdigit():
            per_report = int(args.pop(0))
        elif a == "--only" and args:
            only.append(args.pop(0))
        else:
            print("usage: replay-findings.py [--per-report N] [--only WORD ...]", file=sys.stderr)
            return 2
    toolcert = os.environ.get("TOOLCERT", "target/release/toolcert")
    if not os.access(ROOT / toolcert, os.X_OK):
        print(f"replay-findings.py: no toolcert binary at {toolcert} (cargo build --release, or set TOOLCERT)",
              file=sys.stderr)
        return 2
    checked = failed = changed = 0
    left_out = []
    stale = stale_reports()
    picked: dict[tuple, list] = {}  # (sdk, dialect) or report -> [(report, header, finding)]
    for report in sorted(REPORTS.glob("*.jsonl")):
        if not all(w in report.stem for w in only):
            continue
        header, footer = read(report)
        if not installed(header["subject"]["name"].removeprefix("exec:")):
            left_out.append(report.stem)
            continue
        findings = footer.get("findings") or []
        if per_report:
            picked[(report.stem,)] = [(report, header, f) for f in sample(findings, per_report)]
            continue
        key = (report.stem.partition("--")[0], header.get("dialect"))
        for f in findings:
            best = picked.get(key)
            if not best or size(f) < size(best[0][2]):
                picked[key] = [(report, header, f)]
    for key in sorted(picked):
        for report, header, finding in picked[key]:
            rep = finding.get("reproducer") or {}
            scenario = saved(report, rep.get("case") or finding["first_case"])
            checked += 1
            if not scenario.exists():
                failed += 1
                print(f"FAIL {report.stem} {finding['id']}: no reproducer at {scenario.relative_to(ROOT)}")
                continue
            ids, why = replay(toolcert, header, scenario)
            if ids is None:
                failed += 1
                print(f"FAIL {report.stem} {finding['id']}: the replay could not be judged ({why})")
            elif finding["id"] not in ids and report.name in stale:
                # The report was judged by an older suite (stale.txt): its reproducer ran through
                # the adapter and the SDK, which is what this sample guards; what it shows now
                # is for the regenerated report to say.
                changed += 1
                now = ", ".join(sorted(ids)) or "it conforms"
                print(f"stale {report.stem} {finding['id']}: judged now as {now} (the report is listed in "
                      "docs/certification/stale.txt)")
            elif finding["id"] not in ids:
                failed += 1
                now = ", ".join(sorted(ids)) or "it conforms"
                print(f"FAIL {report.stem} {finding['id']} ({finding['title']}): no longer fails as stated "
                      f"by {scenario.relative_to(ROOT)}; now: {now}")
            else:
                print(f"ok   {report.stem} {finding['id']} ({finding['title']}) by {scenario.relative_to(ROOT)}",
                      flush=True)
    if left_out:
        print(f"left out (subject not installed here): {', '.join(left_out)}")
    print(f"replayed {checked} findings, {failed} do not fail as stated"
          + (f", {changed} of stale reports judged otherwise now" if changed else ""))
    if checked == 0:
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
