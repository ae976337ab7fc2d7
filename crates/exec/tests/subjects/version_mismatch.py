"""A subject that speaks protocol version 2."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "start":
        print(json.dumps({"version": 2, "implementation": {
            "name": "from-the-future", "language": "python", "levels": ["events"]}}), flush=True)
    else:
        break
