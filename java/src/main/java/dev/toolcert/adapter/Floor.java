package dev.toolcert.adapter;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The cost floor of a Java accumulator, for {@code toolcert bench}: the cheapest correct accumulator
 * on the JVM (each call's fragments appended to a {@code StringBuilder}, one strict {@link Json#parse}
 * at the end of the stream), served over the protocol by this package's {@link Server}, so it is
 * timed ({@code elapsed_ns}) and, under {@code --bounded}, weighed ({@code peak_bytes}) exactly as
 * your adapter is. The events level only: this package has no dialect decoders to feed it the wire
 * or bytes levels. Run it with your adapter's class path:
 *
 * <pre>
 * java -cp CLASSPATH dev.toolcert.adapter.Floor
 * toolcert bench --subject 'exec:java -cp CLASSPATH my.Adapter' --floor 'exec:java -cp CLASSPATH dev.toolcert.adapter.Floor'
 * </pre>
 */
public final class Floor implements Accumulator<Map<String, Object>> {
    private static final class Call {
        final String id;
        final String name;
        final StringBuilder parts = new StringBuilder();
        boolean stopped;

        Call(String id, String name) {
            this.id = id;
            this.name = name;
        }
    }

    /** A slot of the message: a call's id, or text (callId null). */
    private static final class Slot {
        final String callId;
        final StringBuilder text = new StringBuilder();

        Slot(String callId) {
            this.callId = callId;
        }
    }

    private final List<Call> calls = new ArrayList<>();
    // By index: a scan of the calls on every announcement (the duplicate check) is quadratic in
    // the calls of a turn (10,000 under toolcert bench --bounded), and a floor must be linear.
    private final Map<Long, Call> byIndex = new HashMap<>();
    private final List<Slot> slots = new ArrayList<>();
    private String stop;
    private boolean errored;

    /** One stream's floor accumulator; the events-level {@link Factory} is {@code (tools, config) -> new Floor()}. */
    public Floor() {}

    /** The floor's server: this accumulator at the events level. */
    static Server server() {
        return Server.named("toolcert-adapter-floor").events((tools, config) -> new Floor());
    }

    /** Serves the floor on stdin and stdout. */
    public static void main(String[] args) throws Exception {
        System.exit(server().serve());
    }

    private static long index(Map<String, Object> e) {
        return ((Number) e.get("index")).longValue();
    }

    @Override
    public void feed(Map<String, Object> e, Emit out) throws TurnError {
        Object type = e.get("type");
        if ("text_delta".equals(type)) {
            String text = (String) e.get("text");
            out.text(text);
            if (slots.isEmpty() || slots.get(slots.size() - 1).callId != null) {
                slots.add(new Slot(null));
            }
            slots.get(slots.size() - 1).text.append(text);
        } else if ("call_start".equals(type)) {
            long i = index(e);
            String id = (String) e.get("call_id");
            if (stop != null) {
                throw new TurnError("fragment_after_stop", "call " + i + " announced after the stop");
            }
            if (byIndex.get(i) != null) {
                throw new TurnError("duplicate_announcement", "index " + i + " announced twice (as " + id + ")");
            }
            Call c = new Call(id, (String) e.get("name"));
            slots.add(new Slot(id));
            calls.add(c);
            byIndex.put(i, c);
        } else if ("args_delta".equals(type)) {
            long i = index(e);
            Call c = byIndex.get(i);
            if (c == null) {
                throw new TurnError("unannounced_index", "fragment for unannounced index " + i);
            }
            if (c.stopped || stop != null) {
                throw new TurnError("fragment_after_stop", "fragment for index " + i + " after its stop");
            }
            c.parts.append((String) e.get("fragment")); // append only: no trim, no parse, no decode
        } else if ("call_stop".equals(type)) {
            long i = index(e);
            Call c = byIndex.get(i);
            if (c == null) {
                throw new TurnError("unannounced_index", "stop for unannounced index " + i);
            }
            if (c.stopped) {
                throw new TurnError("fragment_after_stop", "index " + i + " stopped twice");
            }
            Object whole = e.get("arguments");
            if (whole instanceof String w && !w.contentEquals(c.parts)) {
                throw new TurnError("done_mismatch", "index " + i + ": the terminal's arguments differ from the fragments");
            }
            c.stopped = true;
        } else if ("stop".equals(type)) {
            if (stop != null) {
                throw new TurnError("fragment_after_stop", "a second stop reason");
            }
            Object reason = e.get("reason");
            stop = reason instanceof String r ? r : "";
        } else if ("error".equals(type)) {
            errored = true;
        }
        // ping: nothing; foreign blocks are never calls or text.
    }

    private Map<String, Object> judge(Call c) {
        String raw = c.parts.toString();
        if (stop == null) {
            // Without the stop reason the turn may yet have been cut: never dispatch.
            return Outcomes.failed("abandoned", c.id, c.name, raw);
        }
        if (Protocol.TRUNCATING.contains(stop)) {
            return Outcomes.failed("truncated", c.id, c.name, raw);
        }
        if (raw.isEmpty()) {
            return Outcomes.dispatchable(c.id, c.name, Map.of()); // no argument bytes: no arguments
        }
        try {
            return Outcomes.dispatchable(c.id, c.name, Json.parse(raw));
        } catch (NotJson e) {
            return Outcomes.failed("unparseable", c.id, c.name, raw);
        }
    }

    @Override
    public void finish(String end, Emit out) {
        for (Call c : calls) {
            out.outcome(judge(c));
        }
        List<Map<String, Object>> layout = new ArrayList<>(slots.size());
        for (Slot s : slots) {
            layout.add(s.callId != null ? Emit.callSlot(s.callId) : Emit.textSlot(s.text.toString()));
        }
        out.layout(layout);
        // How the turn ended is what the stream said: no stop reason made up for a stream that
        // simply stopped.
        if (stop != null) {
            out.ending(Protocol.TRUNCATING.contains(stop) ? "truncated" : "complete", stop);
        } else {
            out.ending(errored ? "errored" : "abandoned", null);
        }
    }
}
