"""A subject that answers every run with a stale seq."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "start":
        print(json.dumps({"version": 1, "implementation": {
            "name": "wrong-seq", "language": "python", "levels": ["events"]}}), flush=True)
    elif request["cmd"] == "configure":
        print(json.dumps({"ok": True}), flush=True)
    elif request["cmd"] == "run":
        print(json.dumps({"seq": request["seq"] + 1000, "results": [{"text": ""}]}), flush=True)
