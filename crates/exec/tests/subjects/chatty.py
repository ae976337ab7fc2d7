"""The Python template's accumulator (the toolcert-adapter package) behind a subject that
writes a megabyte to stderr per case (and prints on stderr before it answers): the harness
must drain stderr or both would block."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "python"))
from toolcert_adapter import Config, dumps, run_case  # noqa: E402
from toolcert_adapter.reference import reference_levels  # noqa: E402

IMPLEMENTATION = {
    "name": "chatty",
    "language": "python",
    "levels": ["events", "wire", "bytes"],
    "dialects": ["anthropic", "openai-chat", "openai-responses"],
    "quirks": ["chat_index_zero"],
    "capabilities": ["schema"],
}
FACTORIES = reference_levels()
config = Config(schema=True)
noise = ("debug: " + "." * 1017 + "\n") * 1024
for line in sys.stdin:
    request = json.loads(line)
    cmd = request["cmd"]
    if cmd == "start":
        reply = {"version": 1, "implementation": IMPLEMENTATION}
    elif cmd == "configure":
        config = Config(request["level"], request["dialect"], request["quirks"], request["profile"]["schema"])
        reply = {"ok": True}
    elif cmd == "run":
        sys.stderr.write(noise)
        reply = {"seq": request["seq"], "results": run_case(request["case"], config, FACTORIES)}
    else:
        break
    print(dumps(reply), flush=True)
