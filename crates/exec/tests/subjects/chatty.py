"""The Python template behind a subject that writes a megabyte to stderr per case (and
prints on stderr before it answers): the harness must drain stderr or both would block."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "examples/adapters/python"))
import adapter  # noqa: E402

config = {"level": "events", "dialect": "anthropic", "quirks": {}, "schema": True}
noise = ("debug: " + "." * 1017 + "\n") * 1024
for line in sys.stdin:
    request = json.loads(line)
    cmd = request["cmd"]
    if cmd == "start":
        reply = {"version": 1, "implementation": dict(adapter.IMPLEMENTATION, name="chatty")}
    elif cmd == "configure":
        config = {"level": request["level"], "dialect": request["dialect"],
                  "quirks": request["quirks"], "schema": request["profile"]["schema"]}
        reply = {"ok": True}
    elif cmd == "run":
        sys.stderr.write(noise)
        reply = {"seq": request["seq"], "results": adapter.run_case(request["case"], config)}
    else:
        break
    print(json.dumps(reply), flush=True)
