// toolcert adapter for toyacc, at the events level (`--buggy`: the trimming variant).
import { TurnError, dispatchable, failed, serve, strictParse } from "toolcert-adapter";
import { ProtocolError, ToolCallAccumulator } from "./toyacc.mjs";

const adapter = () => {
    const acc = new ToolCallAccumulator({ parse: strictParse, trim: process.argv.includes("--buggy") });
    const steps = {
        __proto__: null, // e.type is the stream's word: "__proto__" or "toString" must find no step
        text_delta: (e, out) => out.text(e.text),
        call_start: (e) => acc.start(e.index, e.call_id, e.name),
        args_delta: (e) => acc.append(e.index, e.fragment),
        call_stop: (e) => acc.close(e.index, e.arguments),
        stop: (e) => acc.stop(e.reason),
    };
    return {
        feed(e, out) {
            try {
                steps[e.type]?.(e, out);
            } catch (err) {
                throw err instanceof ProtocolError ? new TurnError(err.kind, err.message) : err;
            }
        },
        finish(end, out) {
            for (const c of acc.finish()) out.outcome(c.status === "ok" ? dispatchable(c.id, c.name, c.args) : failed(c.status, c.id, c.name, c.raw));
        },
    };
};

await serve({ name: "toyacc", events: adapter });
