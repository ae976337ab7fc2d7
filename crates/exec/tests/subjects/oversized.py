"""A subject that answers a run with one enormous line."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "start":
        print(json.dumps({"version": 1, "implementation": {
            "name": "oversized", "language": "python", "levels": ["events"]}}), flush=True)
    elif request["cmd"] == "configure":
        print(json.dumps({"ok": True}), flush=True)
    elif request["cmd"] == "run":
        sys.stdout.write('{"seq": %d, "results": [{"text": "' % request["seq"])
        sys.stdout.write("x" * (1 << 20))
        sys.stdout.write('"}]}\n')
        sys.stdout.flush()
