"""A subject that answers a run with a line that is not JSON."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "start":
        print(json.dumps({"version": 1, "implementation": {
            "name": "garbage", "language": "python", "levels": ["events"]}}), flush=True)
    elif request["cmd"] == "configure":
        print(json.dumps({"ok": True}), flush=True)
    elif request["cmd"] == "run":
        print("Hello! Processing your request... done.", flush=True)
