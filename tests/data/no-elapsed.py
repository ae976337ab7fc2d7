"""A protocol subject that answers every run with no outcomes and no `elapsed_ns`: it can
be certified, but `toolcert bench` cannot price it (tests/cost.rs)."""
import json
import sys

for line in sys.stdin:
    req = json.loads(line)
    cmd = req.get("cmd")
    if cmd == "start":
        reply = {"version": 1, "implementation": {"name": "no-elapsed", "language": "python", "levels": ["events"]}}
    elif cmd == "configure":
        reply = {"ok": True}
    elif cmd == "run":
        reply = {"seq": req["seq"], "results": [{"outcomes": [], "text": ""} for _ in req["case"]["streams"]]}
    else:
        break
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
