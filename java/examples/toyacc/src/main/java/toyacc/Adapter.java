package toyacc;

import dev.toolcert.adapter.Accumulator;
import dev.toolcert.adapter.Emit;
import dev.toolcert.adapter.Outcomes;
import dev.toolcert.adapter.Server;
import dev.toolcert.adapter.TurnError;
import java.util.List;
import java.util.Map;

/** toolcert adapter for toyacc, at the events level ({@code --buggy}: the trimming variant). */
public final class Adapter implements Accumulator<Map<String, Object>> {
    private final ToolCallAccumulator acc;

    Adapter(boolean buggy) {
        acc = new ToolCallAccumulator(buggy);
    }

    @Override
    public void feed(Map<String, Object> e, Emit out) throws TurnError {
        try {
            switch ((String) e.get("type")) {
                case "text_delta" -> out.text((String) e.get("text"));
                case "call_start" -> acc.start(index(e), (String) e.get("call_id"), (String) e.get("name"));
                case "args_delta" -> acc.append(index(e), (String) e.get("fragment"));
                case "call_stop" -> acc.close(index(e), (String) e.get("arguments"));
                case "stop" -> acc.stop((String) e.get("reason"));
                default -> { } // pings, errors, foreign blocks: not calls
            }
        } catch (ToolCallAccumulator.ProtocolError err) {
            throw new TurnError(err.kind, err.getMessage());
        }
    }

    private static long index(Map<String, Object> e) {
        return ((Number) e.get("index")).longValue();
    }

    @Override
    public void finish(String end, Emit out) {
        for (ToolCallAccumulator.Call c : acc.finish()) {
            out.outcome("ok".equals(c.status)
                    ? Outcomes.dispatchable(c.id, c.name, c.args)
                    : Outcomes.failed(c.status, c.id, c.name, c.raw()));
        }
    }

    public static void main(String[] args) throws Exception {
        boolean buggy = List.of(args).contains("--buggy");
        System.exit(Server.named("toyacc").events((tools, config) -> new Adapter(buggy)).serve());
    }
}
