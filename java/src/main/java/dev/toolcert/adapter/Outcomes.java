package dev.toolcert.adapter;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The outcomes a call can have (docs/PROTOCOL.md, "Outcomes"), for {@link Emit#outcome}. */
public final class Outcomes {
    private Outcomes() {}

    /** The call finished in a complete turn and its arguments parsed (and meet its schema). */
    public static Map<String, Object> dispatchable(String callId, String name, Object args) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("outcome", "dispatchable");
        o.put("call_id", callId);
        o.put("name", name);
        o.put("args", args);
        return o;
    }

    /** The arguments parsed but violate the tool's schema (schema profile only). */
    public static Map<String, Object> schemaError(String callId, String name, Object args, List<String> errors) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("outcome", "schema_error");
        o.put("call_id", callId);
        o.put("name", name);
        o.put("args", args);
        o.put("errors", List.copyOf(errors));
        return o;
    }

    /** Nothing to run: {@code reason} is abandoned, truncated or unparseable; {@code raw} the buffer as received. */
    public static Map<String, Object> failed(String reason, String callId, String name, String raw) {
        if (!Protocol.FAILURE_REASONS.contains(reason)) {
            throw new IllegalArgumentException(reason + " is not a failure reason (abandoned, truncated, unparseable)");
        }
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("outcome", "failed");
        o.put("reason", reason);
        o.put("call_id", callId);
        o.put("name", name);
        o.put("raw", raw);
        return o;
    }
}
