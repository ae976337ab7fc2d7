"""A subject that skips every case and errors on none: its answers are not crashes."""
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "start":
        print(json.dumps({"version": 1, "implementation": {
            "name": "skips", "language": "python", "levels": ["events", "wire"],
            "dialects": ["anthropic"]}}), flush=True)
    elif request["cmd"] == "configure":
        if request["level"] == "wire":
            print(json.dumps({"ok": False, "reason": "wire is not wired up yet"}), flush=True)
        else:
            print(json.dumps({"ok": True}), flush=True)
    elif request["cmd"] == "run":
        if request["seq"] % 2:
            print(json.dumps({"seq": request["seq"], "skipped": True, "reason": "not today"}), flush=True)
        else:
            print(json.dumps({"seq": request["seq"], "errored": True,
                              "context": {"message": "KeyError: 'x'", "traceback": "Traceback ...\nKeyError: 'x'"}}),
                  flush=True)
