"""A subject that works (it is the Python template) but exits on every third stream it is
given, with a message on stderr: the harness records the crash and restarts it."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "examples/adapters/python"))
import adapter  # noqa: E402

streams = 0
config = {"level": "events", "dialect": "anthropic", "quirks": {}, "schema": True}
for line in sys.stdin:
    request = json.loads(line)
    cmd = request["cmd"]
    if cmd == "start":
        reply = {"version": 1, "implementation": dict(adapter.IMPLEMENTATION, name="crash-every-third")}
    elif cmd == "configure":
        config = {"level": request["level"], "dialect": request["dialect"],
                  "quirks": request["quirks"], "schema": request["profile"]["schema"]}
        reply = {"ok": True}
    elif cmd == "run":
        for _ in request["case"]["streams"]:
            streams += 1
            if streams % 3 == 0:
                print(f"crash-every-third: stream {streams}, giving up", file=sys.stderr)
                sys.exit(3)
        reply = {"seq": request["seq"], "results": adapter.run_case(request["case"], config)}
    else:
        break
    print(json.dumps(reply), flush=True)
