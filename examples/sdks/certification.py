#!/usr/bin/env python3
"""Builds docs/CERTIFICATION.md from the certification reports and the findings notes.

    python3 examples/sdks/certification.py [--toolcert target/release/toolcert] [--allow-mixed-suites]

Run by examples/sdks/certify-all.sh after it certified every subject. Reads every
`docs/certification/reports/<subject>--<dialect>[--<quirk>][--<policy>].jsonl` and every
`docs/certification/notes/<subject>.md`, and writes `docs/CERTIFICATION.md`: what was run,
the implementation x invariant matrix (from `toolcert matrix`), what was skipped and why, and
per SDK and column the distinct findings of the reports' footers (`findings[]`: title,
invariant, grade, cases, the smallest reproducer, the replay command). The notes are
commentary only, keyed by finding id (`## ACC-ABANDON#1a2b3c4d` headings, several ids
separated by commas): each section is printed under the findings it names, the text before
the first such heading under the SDK's title. Facts only: everything in it comes from the
reports and the notes. Standard library only.

Where the cost section goes: `cost_section(reports)` below (it imports
examples/sdks/cost_rows.py when that module exists).
"""

import argparse
import collections
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
REPORTS = ROOT / "docs" / "certification" / "reports"
NOTES = ROOT / "docs" / "certification" / "notes"
OUT = ROOT / "docs" / "CERTIFICATION.md"


def read_report(path):
    """The header, footer and skip reasons of one JSONL report."""
    header, footer, skips = None, None, collections.Counter()
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
            kind = r.get("record")
            if kind == "header":
                header = r
            elif kind == "footer":
                footer = r
            elif kind == "case" and r.get("status") == "skipped":
                skips[r.get("reason") or "(no reason given)"] += 1
    if header is None or footer is None:
        sys.exit(f"{path}: not a complete JSONL report (no header or footer): was the run cut short?")
    return header, footer, skips

CORPUS = ROOT / "corpus" / "findings"
# How long the run took, said in the document (certify-all.sh measures it; a constant, so the
# document stays what these files say).
TIMING = ("on the shared 2-core machine they were made on (load average 15 to 30 from other work), "
          "the 62 Python and Node certifications took about 50 minutes of wall time with 4 to 8 of "
          "them side by side (`JOBS`), most of it in shrinking each new finding's first case through "
          "the real SDK (LiteLLM's runs took 6 to 15 minutes each, the Node ones 1 to 5); genai's 10 "
          "(`examples/sdks/rust`), run once its release build had finished, took 36 seconds, rig-core's 10 "
          "took 2 minutes and the async-openai pattern's 6 took 90 seconds (3 side by side), the 2 of "
          "`@ai-sdk/openai` 3.0.81 about 3 minutes.")
FINDING_ID = re.compile(r"^[A-Z]+(?:-[A-Z0-9]+)*#[0-9a-f]{8}$")


def read_notes(path):
    """A note's intro (before the first finding heading) and its commentary by finding id.
    A `## ` heading whose every comma-separated word is a finding id opens a section for
    those ids; every other line belongs to the section it is in."""
    intro, by_id, current = [], {}, None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            ids = [x.strip() for x in line[3:].split(",")]
            if ids and all(FINDING_ID.match(x) for x in ids):
                current = []
                for x in ids:
                    by_id.setdefault(x, []).append(current)
                continue
        (intro if current is None else current).append(line)
    commentary = {k: "\n\n".join("\n".join(c).strip() for c in v if "\n".join(c).strip()) for k, v in by_id.items()}
    return "\n".join(intro).strip(), commentary


def relink(text):
    """Links written relative to docs/certification/notes/, made relative to docs/."""
    return text.replace("](../../../", "](../").replace("](../reports/", "](certification/reports/")


def md_cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def column_of(path, header):
    """(sdk, column) of a report `SDK--DIALECT[--QUIRK]--POLICY.jsonl`."""
    sdk, _, rest = path.stem.partition("--")
    return sdk, rest.replace("--", " / ") or header.get("dialect") or header["level"]


def reproducer_cell(path, finding):
    """The smallest reproducer: its case, size, and the saved scenario when --out wrote one."""
    rep = finding.get("reproducer") or {}
    case = rep.get("case") or finding.get("first_case", "")
    size = finding.get("size") or {}
    dims = ", ".join(f"{size[k]} {k if size[k] != 1 else k[:-1]}" for k in ("events", "fragments", "bytes") if k in size)
    sdk, _, rest = path.stem.partition("--")
    stem = re.sub(r"[^A-Za-z0-9.-]", "_", case)  # report.rs file_stem
    saved = CORPUS / sdk / rest.rsplit("--", 1)[0] / rest.rsplit("--", 1)[-1] / "failures" / f"{stem}.json"
    cell = f"`{case}`" + (f" ({dims})" if dims else "")
    if saved.exists():
        cell += f" [scenario](../{saved.relative_to(ROOT)})"
    return cell, saved


def findings_section(runs, notes):
    """Per SDK and column, the distinct findings of the reports, with the commentary keyed
    by their ids."""
    out = []
    w = out.append
    by_sdk = collections.OrderedDict()
    for p, label, h, f, skips in runs:
        sdk, column = column_of(p, h)
        by_sdk.setdefault(sdk, []).append((p, column, h, f))
    used = set()
    for sdk, columns in by_sdk.items():
        intro, commentary = notes.get(sdk, ("", {}))
        imp = ((columns[0][2]["subject"].get("metadata") or {}).get("implementation") or {})
        w(f"### {sdk}\n")
        if intro:
            w(relink(intro) + "\n")
        for p, column, h, f in columns:
            findings = f.get("findings") or []
            imp = ((h["subject"].get("metadata") or {}).get("implementation") or {})
            version = " ".join(x for x in (imp.get("name"), imp.get("version")) if x)
            w(f"#### {sdk} / {column}\n")
            w(f"{version}: {f['cases']:,} cases, {f['failed']:,} failed, conforms at **{f['conformance']}**, "
              f"{len(findings)} distinct finding{'s' if len(findings) != 1 else ''} "
              f"([report]({p.relative_to(ROOT / 'docs')})).\n")
            if not findings:
                continue
            w("| finding | title (invariant, grade: what went wrong) | cases | smallest reproducer | replay |")
            w("|---|---|---:|---|---|")
            order = sorted(findings, key=lambda x: (x["grade"] != "must", -x["cases"], x["id"]))
            for x in order:
                cell, _ = reproducer_cell(p, x)
                w(f"| `{x['id']}` | {md_cell(x['title'])} | {x['cases']:,} | {cell} | "
                  f"`{md_cell(x['replay'])}` |")
            w("")
            for x in order:
                if x["id"] in commentary:
                    used.add((sdk, x["id"]))
                    w(f"**`{x['id']}`**: {relink(commentary[x['id']])}\n")
        unused = sorted(k for k in commentary if (sdk, k) not in used)
        if unused:
            w(f"*Commentary in the notes for findings no report of {sdk} shows now: "
              + ", ".join(f"`{k}`" for k in unused) + ".*\n")
        if sdk in notes:
            w(f"*(Commentary: [`docs/certification/notes/{sdk}.md`](certification/notes/{sdk}.md).)*\n")
    for sdk in sorted(set(notes) - set(by_sdk)):
        w(f"*No report of {sdk} in this run, so none of its findings is shown; its commentary is kept in "
          f"[`docs/certification/notes/{sdk}.md`](certification/notes/{sdk}.md).*\n")
    return out


def cost_section(reports):
    """The cost section (what each SDK costs per turn): examples/sdks/cost_rows.py writes it
    when that module exists; nothing otherwise. `reports`: the (path, label, header, footer,
    skips) of every report. Returns the section's lines."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    try:
        import cost_rows  # noqa: F401  (examples/sdks/cost_rows.py, another helper's module)
    except ModuleNotFoundError as e:
        if e.name != "cost_rows":
            raise
        return []
    finally:
        sys.path.pop(0)
    return list(cost_rows.section(reports))


TIERS = [("standard", "1 standard streams"), ("compatible", "2 compatible servers"),
         ("endings", "3 endings"), ("strict", "4 strict arguments"), ("faulty", "5 faulty streams"),
         ("numbers", "6 exact numbers")]


def tiers_section(runs):
    """The front grid: one row per SDK, one column per tier (tier 3 once per caller policy).
    A cell is `pass`, the number of distinct findings counted against the tier, `n/a` (no case
    of its reports could break it) or `—` (no report of it has tiers yet)."""
    sdks = collections.OrderedDict()
    for p, label, h, f, _ in runs:
        name = p.stem.split("--", 1)[0]
        imp = h["subject"].get("metadata", {}).get("implementation") or {}
        policy = imp.get("policy") or p.stem.rsplit("--", 1)[-1]
        row = sdks.setdefault(name, {"version": imp.get("version") or "", "cells": {}})
        for t in f.get("tiers") or []:
            # Tier 3 is shown for both caller policies; the others as the SDK alone
            # (as-handed-over), the documented caller's check changes only endings.
            key = (t["tier"], policy) if t["tier"] == "endings" else (t["tier"], None)
            if t["tier"] != "endings" and policy != "as-handed-over":
                continue
            cell = row["cells"].setdefault(key, {"exercised": 0, "findings": set(), "verdicts": set()})
            cell["exercised"] += t.get("exercised", 0)
            # Bugs where the report has them (docs/SPEC.md, "Bugs"), else its findings.
            cell["findings"].update(t.get("bugs") or t.get("findings") or [])
            cell["verdicts"].add(t["verdict"])
    columns = []
    for tier, title in TIERS:
        if tier == "endings":
            columns += [((tier, "as-handed-over"), f"{title}, SDK alone"), ((tier, "documented"), f"{title}, documented caller")]
        else:
            columns.append(((tier, None), title))

    def show(cell):
        if cell is None:
            return "—"
        bad = cell["verdicts"] & {"fail", "differs"}
        if bad:
            n = len(cell["findings"])
            word = "differs" if bad == {"differs"} else ("bug" if n == 1 else "bugs")
            return f"**{n} {word}**" if word != "differs" else f"differs ({n})"
        return "pass" if cell["exercised"] else "n/a"

    out = ["## Tiers\n",
           "One row per SDK, one column per tier (`docs/SPEC.md`, \"Tiers\"), over all of its reports: "
           "`pass`, the number of bugs counted against the tier (`docs/SPEC.md`, \"Bugs\"), `n/a` (no case could break "
           "it) or `—` (its reports predate the tiers). Tier 3 is shown for the SDK alone "
           "(as-handed-over) and with the caller check its docs ask for (documented); the other tiers "
           "as the SDK alone. Tier 6 is implementation-defined (RFC 8259 §6): `differs`, never a "
           "failure. The findings are listed per report under *Findings* below.\n",
           "| SDK | version | " + " | ".join(t for _, t in columns) + " |",
           "|---|---|" + "---|" * len(columns)]
    for name, row in sdks.items():
        cells = [show(row["cells"].get(key)) for key, _ in columns]
        out.append(f"| {name} | {row['version']} | " + " | ".join(cells) + " |")
    out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--toolcert", default=str(ROOT / "target" / "release" / "toolcert"))
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--allow-mixed-suites", action="store_true",
                    help="let `toolcert matrix` show reports of one setting from different suites (it says so)")
    args = ap.parse_args()

    paths = sorted(p for p in REPORTS.glob("*.jsonl") if p.stat().st_size > 0)
    if not paths:
        sys.exit(f"no reports under {REPORTS}: run examples/sdks/*/certify.sh first")
    runs = []
    for p in paths:
        header, footer, skips = read_report(p)
        label = p.stem.replace("--", " / ")
        runs.append((p, label, header, footer, skips))

    matrix = subprocess.run(
        [args.toolcert, "matrix", "--format", "markdown",
         *(["--allow-mixed-suites"] if args.allow_mixed_suites else []), *map(str, paths)],
        capture_output=True, text=True,
    )
    if matrix.returncode != 0:
        sys.exit(f"toolcert matrix failed ({matrix.returncode}): {matrix.stderr.strip()}")
    table = matrix.stdout
    # Columns are named after the subject command; name them after the report instead.
    for p, label, header, _, _ in runs:
        table = table.replace(f" {header['subject']['name']} (", f" {label} (", 1)
    table = table.split("\n", 1)[1].lstrip("\n")  # drop its own title

    out = []
    w = out.append
    w("# Certification of real SDKs\n")
    stale_path = REPORTS.parent / "stale.txt"
    stale = set()
    if stale_path.exists():
        lines = stale_path.read_text(encoding="utf-8").splitlines()
        stale = {l.strip() for l in lines if l.strip() and not l.startswith("#")} & {p.name for p in paths}
        why = " ".join(l.lstrip("# ").strip() for l in lines if l.startswith("#")).strip()
    if stale:
        w(f"**{len(stale)} of these {len(paths)} reports are stale**: they were judged by an older suite than "
          "the current toolcert's, so what they say may not be what the current rules say "
          f"([`docs/certification/stale.txt`](certification/stale.txt): {why}). "
          "`examples/sdks/check-digests.sh` names each; `examples/sdks/certify-all.sh` regenerates them.\n")
    # The generated cases asked for: those run and those the setting cannot speak.
    generated = sorted({(f.get("generated_cases") or 0) + (f.get("unsupported") or 0) for _, _, _, f, _ in runs})
    seeds = sorted({h.get("seed") for _, _, h, _, _ in runs})
    cases = " or ".join(f"{n:,}" for n in generated if n is not None)
    w("Generated by `python3 examples/sdks/certification.py` from `docs/certification/reports/*.jsonl` and "
      "`docs/certification/notes/*.md`; do not edit by hand. To reproduce everything from the pinned "
      "versions, one command: `examples/sdks/certify-all.sh` (it runs `examples/sdks/python/install.sh`, "
      "`examples/sdks/node/install.sh` and `cargo build --release --locked -p NAME` for each package of "
      "`examples/sdks/rust`, "
      "certifies every subject with progress, then runs this script). "
      f"These reports ran `CASES={cases}` generated cases each (seed {', '.join(map(str, seeds))}; a "
      "quirk profile cannot speak some of them, the report counts those as unsupported) besides the "
      "named cases of their setting: "
      f"{TIMING} "
      "`examples/sdks/check-digests.sh` fails when a report here was judged by another suite than the "
      "current toolcert's for its setting. To certify an SDK of your own: "
      "[`docs/CERTIFY-YOUR-SDK.md`](CERTIFY-YOUR-SDK.md).\n")
    w("Each subject is a real client library, fed every case's exact bytes in the harness's transport "
      "chunks (an injected transport in Python and Node, a loopback mock provider for Rust), at the "
      "`bytes` level, in the dialect its API speaks. What the client hands its caller is mapped onto "
      "outcomes as `docs/PROTOCOL.md` and each adapter's README say. The notes below each report what "
      "goes wrong for that SDK's users, with the version and a replay command for every finding.\n")
    tools = sorted({f"toolcert {h['version']}" for _, _, h, _, _ in runs})
    w(f"The reports were produced by {', '.join(tools)}; each report's header records the toolcert version, "
      "the suite digest of its setting and the SDK versions the adapter declared in its handshake (the "
      "*tool, suite* and *implementation* columns below).\n")
    out.extend(tiers_section(runs))
    w("## Caller policies\n")
    w("An SDK hands its caller a final result; whether the calls in it run is the caller's decision, so "
      "every adapter says which caller it plays, in its handshake (`implementation.policy`, "
      "`docs/PROTOCOL.md`), and each SDK is certified as both:\n")
    w("- **as-handed-over**: every call the SDK's final result offers is dispatched, unless the SDK raised "
      "or marked that very call (an exception, LangChain's `invalid_tool_calls`, a Responses item whose "
      "`status` is `in_progress` or `incomplete`). What the SDK alone guarantees.")
    w("- **documented**: the caller also makes the check the SDK's own documentation tells it to make before "
      "running tools: `stop_reason == \"tool_use\"` (Anthropic), `finish_reason == \"tool_calls\"` (Chat), "
      "`response.status == \"completed\"` (Responses); each adapter's README cites the page. A stop signal "
      "that says the output was cut makes every call `failed(truncated)`, a missing or unfinished one "
      "`failed(abandoned)`; a complete one (`docs/SPEC.md` section 2, which also counts `end_turn`, "
      "`stop_sequence` and `stop` as complete) runs the calls as handed over. The Vercel AI SDK's "
      "`streamText` runs the tools itself, so a caller has nothing to check before they run: both "
      "columns are the same for it.\n")
    w("Under both, an exception from the adapter's own code is the adapter's (SUBJECT-CRASH, with its "
      "traceback), never an SDK turn error; only what the SDK raised, and the transport ends the adapter "
      "made (dropped connection, cancel), are turn errors. `examples/sdks/same-input.py DIALECT` feeds "
      "every adapter of one dialect the same truncated, abandoned and empty-argument cases under each "
      "policy and fails when they disagree; the adapters' `ci.sh` run it. Every SDK that speaks a "
      "dialect of several servers is also certified, as handed over, under each server profile of "
      "the dialect (`toolcert profiles`; `docs/SPEC.md`, \"Server profiles\"): tier 2.\n")
    legacy = [p for p, _, h, _, _ in runs
              if "policy" not in ((h["subject"].get("metadata") or {}).get("implementation") or {})]
    if legacy:
        w(f"{len(legacy)} of these reports predate caller policies (their adapters applied one policy each, "
          "described in the notes); `examples/sdks/certify-all.sh` replaces them.\n")
    w("## What was run\n")
    w("| subject / dialect | implementation | policy | level | cases | failed | skipped | conforms at | tool, suite | report |")
    w("|---|---|---|---|---:|---:|---:|---|---|---|")
    for p, label, h, f, skips in runs:
        imp = h["subject"].get("metadata", {}).get("implementation") or {}
        version = " ".join(x for x in (imp.get("name"), imp.get("version")) if x) or "(in the notes)"
        policy = imp.get("policy") or "(before policies)"
        suite = f"toolcert {h['version']}, suite {h['suite']['version']} ({h['suite']['digest'][7:19]})"
        rel = p.relative_to(ROOT / "docs")
        w(f"| {label} | {version} | {policy} | {h['level']} | {f['cases']:,} | {f['failed']:,} | {f['skipped']:,} | "
          f"**{f['conformance']}** | {suite} | [{p.name}]({rel}) |")
    w("")
    w("*Conforms at*: `none` when the subject breaks a `must` part of some invariant (it can dispatch a "
      "call it should not, or lose one it should dispatch), `must` when only `should` parts break, "
      "`should` when nothing does.\n")
    w("## The matrix\n")
    w(table.rstrip() + "\n")
    w("## Skipped, and not checked\n")
    w("Nothing is skipped silently. Every case a subject did not run is counted in its report with the "
      "reason; every invariant a run did not check is marked ➖ in the matrix.\n")
    w("- **ACC-SCHEMA** is not checked for any subject: none of these SDKs validates a call's arguments "
      "against its tool's JSON Schema, so they were certified with `--no-schema` (cases that exist only "
      "to test schema validation are skipped: they need the schema profile).")
    for p, label, h, f, skips in runs:
        if not skips:
            continue
        reasons = "; ".join(f"{n} × {reason}" for reason, n in skips.most_common())
        w(f"- **{label}**: {reasons}.")
    w("")
    # --- cost section (helper "cost": examples/sdks/cost_rows.py) ---
    out.extend(cost_section(runs))
    # --- end cost section ---
    w("## Findings\n")
    w("Per SDK and column (dialect, quirk profile, caller policy), the distinct findings of the report: "
      "each is one signature (invariant, grade, what went wrong) however many cases show it, with the "
      "number of cases, the smallest reproducer the run kept (shrunk; its scenario under "
      "`corpus/findings/`) and the command that replays the case as first run. "
      "`examples/sdks/replay-findings.py` replays a sample of these reproducers against the pinned SDKs "
      "and fails when one no longer fails as stated. The prose under a table is commentary from "
      "`docs/certification/notes/SDK.md`, keyed by finding id.\n")
    notes = {n.stem: read_notes(n) for n in sorted(NOTES.glob("*.md"))}
    out.extend(findings_section(runs, notes))
    pathlib.Path(args.out).write_text("\n".join(out), encoding="utf-8")
    total = sum(len(f.get("findings") or []) for _, _, _, f, _ in runs)
    print(f"wrote {args.out}: {len(runs)} reports, {total} findings, {len(notes)} notes")


if __name__ == "__main__":
    main()
