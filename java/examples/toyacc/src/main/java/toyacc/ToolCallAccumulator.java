package toyacc;

import dev.toolcert.adapter.Json;
import dev.toolcert.adapter.NotJson;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A toy streaming tool-call accumulator: the library under test in the example. It buffers argument
 * fragments per call index and parses each buffer once the stream is done. {@code trim = true} has
 * the seeds' first bug: it trims every fragment, so a space at a fragment's edge (inside a string)
 * vanishes.
 */
public final class ToolCallAccumulator {
    /** A fault in the stream: {@code kind} is the protocol's error class. */
    public static final class ProtocolError extends Exception {
        private static final long serialVersionUID = 1L;
        public final String kind;

        ProtocolError(String kind, String message) {
            super(message);
            this.kind = kind;
        }
    }

    /** One call: its id, name, fragments, and once finished its status and arguments. */
    public static final class Call {
        public final String id;
        public final String name;
        final StringBuilder raw = new StringBuilder();
        boolean closed;
        public String status = "abandoned";
        public Object args;

        Call(String id, String name) {
            this.id = id;
            this.name = name;
        }

        public String raw() {
            return raw.toString();
        }
    }

    private static final Set<String> TRUNCATING = Set.of("max_tokens", "refusal", "length", "content_filter", "incomplete");

    private final boolean trim;
    private final List<Call> calls = new ArrayList<>();
    private final Map<Long, Call> byIndex = new HashMap<>();
    private String stopReason;

    public ToolCallAccumulator(boolean trim) {
        this.trim = trim;
    }

    public void start(long index, String callId, String name) throws ProtocolError {
        if (stopReason != null) {
            throw new ProtocolError("fragment_after_stop", "call " + index + " after the stop");
        }
        if (byIndex.containsKey(index)) {
            throw new ProtocolError("duplicate_announcement", "index " + index + " announced twice");
        }
        Call call = new Call(callId, name);
        byIndex.put(index, call);
        calls.add(call);
    }

    private Call open(long index) throws ProtocolError {
        Call call = byIndex.get(index);
        if (call == null) {
            throw new ProtocolError("unannounced_index", "index " + index + " was never announced");
        }
        if (call.closed || stopReason != null) {
            throw new ProtocolError("fragment_after_stop", "index " + index + " is closed");
        }
        return call;
    }

    public void append(long index, String fragment) throws ProtocolError {
        open(index).raw.append(trim ? fragment.strip() : fragment);
    }

    public void close(long index, String arguments) throws ProtocolError {
        Call call = open(index);
        if (arguments != null && !arguments.equals(call.raw())) {
            throw new ProtocolError("done_mismatch", "index " + index + ": done differs from the deltas");
        }
        call.closed = true;
    }

    public void stop(String reason) throws ProtocolError {
        if (stopReason != null) {
            throw new ProtocolError("fragment_after_stop", "a second stop reason");
        }
        stopReason = reason;
    }

    public List<Call> finish() {
        for (Call call : calls) {
            if (stopReason == null) {
                continue; // the turn may have been cut: abandoned
            }
            if (TRUNCATING.contains(stopReason)) {
                call.status = "truncated";
                continue;
            }
            try {
                call.args = call.raw.length() == 0 ? Map.of() : Json.parse(call.raw());
                call.status = "ok";
            } catch (NotJson e) {
                call.status = "unparseable";
            }
        }
        return calls;
    }
}
