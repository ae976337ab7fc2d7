#!/usr/bin/env bash
# Fails when a committed SDK report (docs/certification/reports/*.jsonl) was judged by another
# suite than the current toolcert's for its setting: the suite moved (named cases, generator
# configuration, or the oracle, generator or dialect code that decides the verdicts of the
# setting's fixed sample: crates/runner/src/suite.rs) and the published reports did not follow. Regenerate them with
# examples/sdks/certify-all.sh.
#
# The suite digest is per setting (crates/runner/src/suite.rs: the named cases that setting
# runs, its generator configuration and its verdict sample), so each report is compared with the current digest
# of its own setting (level, dialect, quirk profile, schema profile), read from the header of
# a one-case run of the built-in reference accumulator at that setting: a second per setting.
#   TOOLCERT=target/release/toolcert examples/sdks/check-digests.sh [REPORT ...]
# Exit status: 0 every report is current, 1 some report is stale, 2 no toolcert or no reports.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
TOOLCERT="${TOOLCERT:-target/release/toolcert}"
if [ ! -x "$TOOLCERT" ]; then
    echo "check-digests.sh: no toolcert binary at $TOOLCERT (cargo build --release, or set TOOLCERT)" >&2
    exit 2
fi
if [ $# -gt 0 ]; then reports=("$@"); else reports=(docs/certification/reports/*.jsonl); fi
[ -e "${reports[0]}" ] || { echo "check-digests.sh: no reports under docs/certification/reports" >&2; exit 2; }

python3 - "$TOOLCERT" "${reports[@]}" <<'PY'
import json, subprocess, sys

toolcert, paths = sys.argv[1], sys.argv[2:]
current = {}  # (level, dialect, quirk flags, schema) -> digest


def digest_now(level, dialect, quirks, schema):
    key = (level, dialect, quirks, schema)
    if key not in current:
        cmd = [toolcert, "certify", "--subject", "builtin:reference", "--level", level, "--cases", "1", "--seed", "1",
               "--case", "gen/1/0", "--format", "jsonl"]
        if dialect:
            cmd += ["--dialect", dialect]
        cmd += list(quirks)
        if not schema:
            cmd.append("--no-schema")
        run = subprocess.run(cmd, capture_output=True, text=True)
        first = run.stdout.split("\n")[:1]
        if not first:
            sys.exit(f"check-digests.sh: {' '.join(cmd)} gave no header: {run.stderr.strip()}")
        current[key] = json.loads(first[0])["suite"]["digest"]
    return current[key]


# Reports known to be stale, listed with the reason in docs/certification/stale.txt: printed,
# not failed; a listed report that is current again fails, so the list cannot rot.
stale_list = set()
try:
    with open("docs/certification/stale.txt", encoding="utf-8") as f:
        stale_list = {l.strip() for l in f if l.strip() and not l.startswith("#")}
except FileNotFoundError:
    pass

stale = known = relisted = 0
for path in paths:
    with open(path, encoding="utf-8") as f:
        header = json.loads(f.readline() or "{}")
    if header.get("record") != "header":
        print(f"STALE {path}: no JSONL header")
        stale += 1
        continue
    level, dialect, schema = header.get("level"), header.get("dialect"), bool(header.get("schema"))
    # The server profile the report was run in (reports from before the profiles: their flag).
    quirks = tuple(f"--{q.replace('_', '-')}" for q in ("chat_index_zero", "chat_repeat_fields") if header.get(q))
    if header.get("profile"):
        quirks = ("--profile", header["profile"])
    have, want = header["suite"]["digest"], digest_now(level, dialect, quirks, schema)
    setting = f"{level} ({dialect}{''.join(' ' + q.lstrip('-') for q in quirks)}), schema {'on' if schema else 'off'}"
    listed = path.rsplit("/", 1)[-1] in stale_list
    if have == want and listed:
        relisted += 1
        print(f"LISTED {path}: {setting}: current, but docs/certification/stale.txt lists it as stale: remove it there")
    elif have == want:
        print(f"ok    {path}: {setting}, suite {have[7:19]}")
    elif listed:
        known += 1
        print(f"known stale {path}: {setting}: judged by suite {have[7:19]}, the current suite is {want[7:19]} (docs/certification/stale.txt)")
    else:
        stale += 1
        print(f"STALE {path}: {setting}: judged by suite {have[7:19]}, the current suite is {want[7:19]}")
print(f"{len(paths)} reports, {stale} stale, {known} known stale (docs/certification/stale.txt), {relisted} listed but current"
      + (": regenerate them with examples/sdks/certify-all.sh" if stale or known else ""))
sys.exit(1 if stale or relisted else 0)
PY
