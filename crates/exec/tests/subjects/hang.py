"""A subject that shakes hands, then stops reading its stdin and never answers again."""
import json
import sys
import time

for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "start":
        print(json.dumps({"version": 1, "implementation": {
            "name": "hang", "language": "python", "levels": ["events", "wire", "bytes"],
            "dialects": ["anthropic", "openai-chat", "openai-responses"]}}), flush=True)
    elif request["cmd"] == "configure":
        print(json.dumps({"ok": True}), flush=True)
        print("hang: sleeping forever without reading stdin", file=sys.stderr, flush=True)
        while True:
            time.sleep(60)
