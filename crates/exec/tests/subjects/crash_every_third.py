"""A subject that works (the Python template's accumulator, from the toolcert-adapter
package) but exits on every third stream it is given, with a message on stderr: the harness
records the crash and restarts it."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "python"))
from toolcert_adapter import Config, dumps, run_case  # noqa: E402
from toolcert_adapter.reference import reference_levels  # noqa: E402

IMPLEMENTATION = {
    "name": "crash-every-third",
    "language": "python",
    "levels": ["events", "wire", "bytes"],
    "dialects": ["anthropic", "openai-chat", "openai-responses"],
    "quirks": ["chat_index_zero"],
    "capabilities": ["schema"],
}
FACTORIES = reference_levels()
streams = 0
config = Config(schema=True)
for line in sys.stdin:
    request = json.loads(line)
    cmd = request["cmd"]
    if cmd == "start":
        reply = {"version": 1, "implementation": IMPLEMENTATION}
    elif cmd == "configure":
        config = Config(request["level"], request["dialect"], request["quirks"], request["profile"]["schema"])
        reply = {"ok": True}
    elif cmd == "run":
        for _ in request["case"]["streams"]:
            streams += 1
            if streams % 3 == 0:
                print(f"crash-every-third: stream {streams}, giving up", file=sys.stderr)
                sys.exit(3)
        reply = {"seq": request["seq"], "results": run_case(request["case"], config, FACTORIES)}
    else:
        break
    print(dumps(reply), flush=True)
