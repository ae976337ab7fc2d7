"""toolcert adapter for toyacc, at the events level (`--buggy`: the trimming variant)."""
import sys
from toolcert_adapter import TurnError, dispatchable, failed, loads, serve
from toyacc import ProtocolError, ToolCallAccumulator

class Adapter:
    def __init__(self, tools, config):
        self.acc = ToolCallAccumulator(parse=loads, trim="--buggy" in sys.argv)

    def feed(self, e, out):
        try:
            match e["type"]:
                case "text_delta": out.text(e["text"])
                case "call_start": self.acc.start(e["index"], e["call_id"], e["name"])
                case "args_delta": self.acc.append(e["index"], e["fragment"])
                case "call_stop": self.acc.close(e["index"], e.get("arguments"))
                case "stop": self.acc.stop(e["reason"])
        except ProtocolError as err:
            raise TurnError(err.kind, str(err)) from None

    def finish(self, end, out):
        for c in self.acc.finish():
            ok = c.status == "ok"
            out.outcome(dispatchable(c.id, c.name, c.args) if ok else failed(c.status, c.id, c.name, c.raw))

sys.exit(serve(name="toyacc", events=Adapter))
