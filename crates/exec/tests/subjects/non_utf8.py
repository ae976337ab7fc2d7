"""A subject that answers a run with bytes that are not UTF-8."""
import json
import sys

out = sys.stdout.buffer
for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "start":
        out.write(json.dumps({"version": 1, "implementation": {
            "name": "non-utf8", "language": "python", "levels": ["events"]}}).encode() + b"\n")
    elif request["cmd"] == "configure":
        out.write(b'{"ok": true}\n')
    elif request["cmd"] == "run":
        out.write(b'{"seq": ' + str(request["seq"]).encode() + b', "results": [{"text": "caf\xe9"}]}\n')
    out.flush()
