#!/usr/bin/env bash
# Fails when a committed SDK report (docs/certification/reports/*.jsonl) was judged by another
# suite than the current toolcert's for its setting: the suite moved (named cases, generator
# configuration) and the published reports did not follow. Regenerate them with
# examples/sdks/certify-all.sh.
#
# The current digest of a setting (level, dialect, schema profile: what the suite digest
# depends on, crates/runner/src/suite.rs) is read from the header of a one-case run of the
# built-in reference accumulator at that setting, so this takes a second per setting.
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
current = {}  # (level, dialect, schema) -> digest


def digest_now(level, dialect, schema):
    key = (level, dialect, schema)
    if key not in current:
        cmd = [toolcert, "certify", "--subject", "builtin:reference", "--level", level, "--cases", "1", "--seed", "1",
               "--case", "gen/1/0", "--format", "jsonl"]
        if dialect:
            cmd += ["--dialect", dialect]
        if not schema:
            cmd.append("--no-schema")
        run = subprocess.run(cmd, capture_output=True, text=True)
        first = run.stdout.splitlines()[:1]
        if not first:
            sys.exit(f"check-digests.sh: {' '.join(cmd)} gave no header: {run.stderr.strip()}")
        current[key] = json.loads(first[0])["suite"]["digest"]
    return current[key]


stale = 0
for path in paths:
    with open(path, encoding="utf-8") as f:
        header = json.loads(f.readline() or "{}")
    if header.get("record") != "header":
        print(f"STALE {path}: no JSONL header")
        stale += 1
        continue
    level, dialect, schema = header.get("level"), header.get("dialect"), bool(header.get("schema"))
    have, want = header["suite"]["digest"], digest_now(level, dialect, schema)
    setting = f"{level} ({dialect}), schema {'on' if schema else 'off'}"
    if have == want:
        print(f"ok    {path}: {setting}, suite {have[7:19]}")
    else:
        stale += 1
        print(f"STALE {path}: {setting}: judged by suite {have[7:19]}, the current suite is {want[7:19]}")
print(f"{len(paths)} reports, {stale} stale" + (": regenerate them with examples/sdks/certify-all.sh" if stale else ""))
sys.exit(1 if stale else 0)
PY
