#!/usr/bin/env python3
"""Builds docs/CERTIFICATION.md, the front grid of the certification, from the certification reports.

    python3 examples/sdks/certification.py [--out FILE] [--site DIR [--toolcert BIN]]

Run by examples/sdks/certify-all.sh after it certified every subject. Reads every
`docs/certification/reports/<subject>--<dialect>[--<quirk>][--<policy>].jsonl` and writes
`docs/CERTIFICATION.md`: what was run, in a paragraph; the tier grid (one row per SDK, one
column per tier, a cell `pass`, the number of bugs, `n/a` or `—`); the caller policies; the cost
rows; and a link per SDK to its page of the certification site, `docs/site/` (built from the same
reports by `toolcert site`, which `--site DIR` runs): the bugs with their reproducers, the
commentary of `docs/certification/notes/` and what was not tested are there, not here. Facts
only: everything in it comes from the reports. Standard library only.

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

# How long the run took, said in the document (certify-all.sh measures it; a constant, so the
# document stays what these files say).
TIMING = ("on the shared 2-core machine they were made on (load average 15 to 30 from other work), "
          "the 62 Python and Node certifications took about 50 minutes of wall time with 4 to 8 of "
          "them side by side (`JOBS`), most of it in shrinking each new finding's first case through "
          "the real SDK (LiteLLM's runs took 6 to 15 minutes each, the Node ones 1 to 5); genai's 10 "
          "(`examples/sdks/rust`), run once its release build had finished, took 36 seconds, rig-core's 10 "
          "took 2 minutes and the async-openai pattern's 6 took 90 seconds (3 side by side), the 2 of "
          "`@ai-sdk/openai` 3.0.81 about 3 minutes.")
SITE = ROOT / "docs" / "site"


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
         ("endings", "3 endings"), ("strict", "4 strict arguments"), ("faulty", "5a faulty streams"),
         ("hostile", "5b hostile upstream"), ("numbers", "6 exact numbers")]


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

    def page(name):
        # The SDK's page of the site; file_stem of crates/runner/src/report.rs.
        return "site/sdk/" + re.sub(r"[^A-Za-z0-9.-]", "_", name) + ".html"

    def linked(name, key, text):
        anchor = "endings-documented" if key == ("endings", "documented") else key[0]
        return f"[{text}]({page(name)}#tier-{anchor})" if text.startswith("**") else text

    out = ["## Tiers\n",
           "One row per SDK, one column per tier (`docs/SPEC.md`, \"Tiers\"), over all of its reports: "
           "`pass`, the number of bugs counted against the tier (`docs/SPEC.md`, \"Bugs\"), `n/a` (no case could break "
           "it) or `—` (its reports predate the tiers). Tier 3 is shown for the SDK alone "
           "(as-handed-over) and with the caller check its docs ask for (documented); the other tiers "
           "as the SDK alone. Tier 6 is implementation-defined (RFC 8259 §6): `differs`, never a "
           "failure. A count links to the bugs on the SDK's page of the [site](site/index.html).\n",
           "| SDK | version | " + " | ".join(t for _, t in columns) + " |",
           "|---|---|" + "---|" * len(columns)]
    for name, row in sdks.items():
        cells = [linked(name, key, show(row["cells"].get(key))) for key, _ in columns]
        out.append(f"| [{name}]({page(name)}) | {row['version']} | " + " | ".join(cells) + " |")
    out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--site", metavar="DIR",
                    help="also build the site into DIR with `toolcert site` (certify-all.sh: docs/site)")
    ap.add_argument("--toolcert", default=str(ROOT / "target" / "release" / "toolcert"),
                    help="the toolcert binary that builds the site (--site)")
    args = ap.parse_args()

    paths = sorted(p for p in REPORTS.glob("*.jsonl") if p.stat().st_size > 0)
    if not paths:
        sys.exit(f"no reports under {REPORTS}: run examples/sdks/*/certify.sh first")
    runs = []
    for p in paths:
        header, footer, skips = read_report(p)
        label = p.stem.replace("--", " / ")
        runs.append((p, label, header, footer, skips))

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
    sdks = sorted({p.stem.split("--", 1)[0] for p, *_ in runs})
    w("Generated by `python3 examples/sdks/certification.py` from `docs/certification/reports/*.jsonl`; do not "
      "edit by hand. The bugs of each SDK, their smallest reproducers (the raw bytes, a replay command and a "
      "standalone script), the commentary of `docs/certification/notes/` and what was not tested are on its "
      "page of the certification site, [`docs/site/`](site/index.html), which "
      "`toolcert site --reports docs/certification/reports --out docs/site` builds from the same reports. "
      "To reproduce everything from the pinned versions, one command: `examples/sdks/certify-all.sh` (it runs "
      "`examples/sdks/python/install.sh`, `examples/sdks/node/install.sh` and `cargo build --release --locked "
      "-p NAME` for each package of `examples/sdks/rust`, certifies every subject with progress, then runs this "
      f"script and builds the site). {len(paths)} reports of {len(sdks)} SDKs ran `CASES={cases}` generated "
      f"cases each (seed {', '.join(map(str, seeds))}; a quirk profile cannot speak some of them, the report "
      "counts those as unsupported) besides the named cases of their setting: "
      f"{TIMING} "
      "`examples/sdks/check-digests.sh` fails when a report here was judged by another suite than the "
      "current toolcert's for its setting. To certify an SDK of your own: "
      "[`docs/CERTIFY-YOUR-SDK.md`](CERTIFY-YOUR-SDK.md).\n")
    w("Each subject is a real client library, fed every case's exact bytes in the harness's transport "
      "chunks (an injected transport in Python and Node, a loopback mock provider for Rust), at the "
      "`bytes` level, in the dialect its API speaks. What the client hands its caller is mapped onto "
      "outcomes as `docs/PROTOCOL.md` and each adapter's README say.\n")
    tools = sorted({f"toolcert {h['version']}" for _, _, h, _, _ in runs})
    w(f"The reports were produced by {', '.join(tools)}; each report's header records the toolcert version, "
      "the suite digest of its setting and the SDK versions the adapter declared in its handshake.\n")
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
        w(f"{len(legacy)} of these reports predate caller policies (their adapters applied one policy each); "
          "`examples/sdks/certify-all.sh` replaces them.\n")
    # --- cost section (helper "cost": examples/sdks/cost_rows.py) ---
    out.extend(cost_section(runs))
    # --- end cost section ---
    w("## SDK pages\n")
    w("Per SDK, its page of the site: every bug, most serious first (a silent wrong dispatch before a loud "
      "failure), with its symptoms, the columns (reports) it appears in, its smallest reproducer and a replay "
      "command; the cost rows; what was not tested; its badges. Its reports are listed there too.\n")
    by_sdk = collections.OrderedDict()
    for p, *_ in runs:
        by_sdk.setdefault(p.stem.split("--", 1)[0], []).append(p)
    for sdk, ps in by_sdk.items():
        page = "site/sdk/" + re.sub(r"[^A-Za-z0-9.-]", "_", sdk) + ".html"
        w(f"- [{sdk}]({page}): {len(ps)} report{'s' if len(ps) != 1 else ''}")
    w("")
    text = "\n".join(out)
    pathlib.Path(args.out).write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {len(runs)} reports, {text.count(chr(10)) + 1} lines")
    if args.site:
        built = subprocess.run([args.toolcert, "site", "--reports", str(REPORTS), "--out", args.site,
                                "--reproducers", str(ROOT / "corpus" / "findings"), "--notes", str(NOTES)])
        if built.returncode != 0:
            sys.exit(f"toolcert site failed ({built.returncode})")


if __name__ == "__main__":
    main()
