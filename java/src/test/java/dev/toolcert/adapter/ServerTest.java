package dev.toolcert.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The protocol loop: handshake, configure, run with stamps, turn errors, crashes, skips. */
class ServerTest {
    /** Joins each call's fragments; dispatches at finish; fails the turn on an unannounced index. */
    static final class Joiner implements Accumulator<Map<String, Object>> {
        private final Map<Object, StringBuilder> args = new java.util.LinkedHashMap<>();
        private final Map<Object, String[]> calls = new java.util.LinkedHashMap<>();

        @Override
        public void feed(Map<String, Object> e, Emit out) throws Exception {
            switch ((String) e.get("type")) {
                case "text_delta" -> out.text((String) e.get("text"));
                case "call_start" -> {
                    calls.put(e.get("index"), new String[] {(String) e.get("call_id"), (String) e.get("name")});
                    args.put(e.get("index"), new StringBuilder());
                }
                case "args_delta" -> {
                    StringBuilder b = args.get(e.get("index"));
                    if (b == null) {
                        throw new TurnError("unannounced_index", "index " + e.get("index"));
                    }
                    b.append((String) e.get("fragment"));
                }
                case "ping" -> throw new IllegalStateException("boom");
                case "error" -> throw new Skip("no errors here");
                case "too_many" -> throw new TurnError("limit", "past the cap");
                default -> { }
            }
        }

        @Override
        public void finish(String end, Emit out) throws Exception {
            for (Map.Entry<Object, String[]> c : calls.entrySet()) {
                out.outcome(Outcomes.dispatchable(c.getValue()[0], c.getValue()[1], Json.parse(args.get(c.getKey()).toString())));
            }
            out.ending("complete", "tool_use");
        }
    }

    private static Server joiner() {
        return Server.named("joiner").events((tools, config) -> new Joiner()).quirks(Protocol.QUIRKS).extra("policy", "documented");
    }

    private static List<Map<String, Object>> exchange(String... requests) throws IOException, NotJson {
        return exchange(joiner(), requests);
    }

    private static List<Map<String, Object>> exchange(Server server, String... requests) throws IOException, NotJson {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String in = String.join("\n", requests) + "\n";
        int code = server.serve(new ByteArrayInputStream(in.getBytes(StandardCharsets.UTF_8)), out);
        assertEquals(0, code);
        List<Map<String, Object>> replies = new ArrayList<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            replies.add(Server.asMap(Json.parse(line)));
        }
        return replies;
    }

    private static final String START = "{\"cmd\":\"start\",\"version\":1,\"toolcert\":\"0.1.0\"}";
    private static final String CONFIGURE = "{\"cmd\":\"configure\",\"level\":\"events\",\"dialect\":\"anthropic\",\"quirks\":{}}";

    @Test
    void aCaseIsRunWithStampsAndNumbersKept() throws Exception {
        String run = "{\"cmd\":\"run\",\"seq\":7,\"case\":{\"streams\":[{\"tools\":[],\"units\":["
                + "{\"type\":\"text_delta\",\"text\":\"hi\"},"
                + "{\"type\":\"call_start\",\"index\":0,\"call_id\":\"c1\",\"name\":\"f\"},"
                + "{\"type\":\"args_delta\",\"index\":0,\"fragment\":\"{\\\"n\\\": 1.50, \\\"b\\\": 12345678901234567890123\"},"
                + "{\"type\":\"args_delta\",\"index\":0,\"fragment\":\"}\"}],\"end\":\"eof\"},"
                + "{\"units\":[{\"type\":\"args_delta\",\"index\":3,\"fragment\":\"x\"}],\"end\":\"eof\"}],"
                + "\"order\":[[0,0],[1,0],[0,1],[0,2],[1,1],[0,3],[0,4]]}}";
        List<Map<String, Object>> replies = exchange(START, CONFIGURE, run, "{\"cmd\":\"stop\"}");
        assertEquals(3, replies.size());
        Map<String, Object> impl = Server.asMap(replies.get(0).get("implementation"));
        assertEquals("java", impl.get("language"));
        assertEquals("documented", impl.get("policy"));
        assertEquals(List.of("events"), impl.get("levels"));
        assertEquals(Boolean.TRUE, replies.get(1).get("ok"));
        Map<String, Object> reply = replies.get(2);
        assertEquals(new JsonNumber("7"), reply.get("seq"));
        List<Object> results = Server.asList(reply.get("results"));
        Map<String, Object> first = Server.asMap(results.get(0));
        assertEquals("hi", first.get("text"));
        Map<String, Object> outcome = Server.asMap(Server.asList(first.get("outcomes")).get(0));
        assertEquals("{\"n\":1.50,\"b\":12345678901234567890123}", Json.write(outcome.get("args")));
        assertEquals(new JsonNumber("4"), outcome.get("units")); // the last unit; finish adds none
        assertEquals(Boolean.TRUE, outcome.get("at_finish"));
        Map<String, Object> error = Server.asMap(Server.asMap(results.get(1)).get("error"));
        assertEquals("unannounced_index", error.get("class"));
        assertEquals(new JsonNumber("1"), error.get("units"));
        assertEquals(Boolean.FALSE, error.get("at_finish"));
    }

    @Test
    void crashesSkipsAndRefusedSettings() throws Exception {
        String crash = "{\"cmd\":\"run\",\"seq\":1,\"case\":{\"streams\":[{\"units\":[{\"type\":\"ping\"}],\"end\":\"eof\"}],"
                + "\"order\":[[0,0],[0,1]]}}";
        String skip = "{\"cmd\":\"run\",\"seq\":2,\"case\":{\"streams\":[{\"units\":[{\"type\":\"error\",\"message\":\"x\"}],"
                + "\"end\":\"eof\"}],\"order\":[[0,0],[0,1]]}}";
        String wire = "{\"cmd\":\"configure\",\"level\":\"wire\",\"dialect\":\"anthropic\"}";
        List<Map<String, Object>> replies = exchange(START, CONFIGURE, crash, skip, wire);
        Map<String, Object> crashed = Server.asMap(Server.asList(replies.get(2).get("results")).get(0));
        assertTrue(((String) crashed.get("crash")).contains("IllegalStateException: boom"));
        assertEquals(Boolean.TRUE, replies.get(3).get("skipped"));
        assertEquals("no errors here", replies.get(3).get("reason"));
        assertEquals(Boolean.FALSE, replies.get(4).get("ok"));
    }

    @Test
    void capsAreDeclaredOnlyWhenGivenAndLimitIsATurnError() throws Exception {
        assertFalse(Server.asMap(exchange(START).get(0).get("implementation")).containsKey("caps"));
        String run = "{\"cmd\":\"run\",\"seq\":1,\"case\":{\"streams\":[{\"units\":[{\"type\":\"too_many\"}],\"end\":\"eof\"}],"
                + "\"order\":[[0,0],[0,1]]}}";
        Server capped = joiner().caps(Map.of("calls", 128, "argument_bytes", 16777216L, "fragments", 65536, "depth", 128));
        List<Map<String, Object>> replies = exchange(capped, START, CONFIGURE, run);
        Object caps = Server.asMap(replies.get(0).get("implementation")).get("caps");
        assertEquals("{\"calls\":128,\"argument_bytes\":16777216,\"fragments\":65536,\"depth\":128}", Json.write(caps));
        Map<String, Object> error = Server.asMap(Server.asMap(Server.asList(replies.get(2).get("results")).get(0)).get("error"));
        assertEquals("limit", error.get("class"));
        assertEquals("past the cap", error.get("detail"));
        for (Map<String, ? extends Number> bad : List.<Map<String, ? extends Number>>of(Map.of("tools", 1), Map.of("calls", -1), Map.of("depth", 1.5))) {
            assertThrows(IllegalArgumentException.class, () -> joiner().caps(bad));
        }
    }

    @Test
    void elapsedNsCountsTheThreadsTheAccumulationRunsOn() throws Exception {
        // The finish hands its work to another thread (as the SDK harness runs an SDK on a pool)
        // and waits: that thread's CPU time is the run's too. Before, the process's CPU time
        // (times(2): 10 ms ticks) reported 0 ns for most runs.
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newSingleThreadExecutor();
        long[] spent = new long[1];
        try {
            Server offThread = Server.named("off-thread").events((tools, config) -> new Accumulator<Map<String, Object>>() {
                @Override
                public void feed(Map<String, Object> e, Emit out) { }

                @Override
                public void finish(String end, Emit out) throws Exception {
                    spent[0] = pool.submit(() -> {
                        java.lang.management.ThreadMXBean t = java.lang.management.ManagementFactory.getThreadMXBean();
                        long started = t.getCurrentThreadCpuTime();
                        long x = 0;
                        for (int i = 0; i < 2_000_000; i++) {
                            x = x * 31 + i;
                        }
                        out.text(Long.toString(x & 1));
                        return t.getCurrentThreadCpuTime() - started;
                    }).get();
                }
            });
            String run = "{\"cmd\":\"run\",\"seq\":1,\"case\":{\"streams\":[{\"units\":[],\"end\":\"eof\"}],\"order\":[[0,0]]}}";
            List<Map<String, Object>> replies = exchange(offThread, CONFIGURE, run);
            long elapsed = ((JsonNumber) replies.get(1).get("elapsed_ns")).longValue();
            assertTrue(spent[0] > 0 && elapsed >= spent[0], "elapsed_ns " + elapsed + " < the pool thread's " + spent[0] + " ns");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void peakBytesOnlyWhenMemoryIsAskedFor() throws Exception {
        // The finish emits 8 MiB of text, which the result keeps: the peak covers it.
        Server big = Server.named("big").events((tools, config) -> new Accumulator<Map<String, Object>>() {
            @Override
            public void feed(Map<String, Object> e, Emit out) { }

            @Override
            public void finish(String end, Emit out) {
                out.text("x".repeat(8 << 20));
            }
        });
        String memory = "{\"cmd\":\"configure\",\"level\":\"events\",\"dialect\":\"anthropic\",\"profile\":{\"memory\":true}}";
        String run = "{\"cmd\":\"run\",\"seq\":1,\"case\":{\"streams\":[{\"units\":[{\"type\":\"text_delta\",\"text\":\"x\"}],"
                + "\"end\":\"eof\"}],\"order\":[[0,0],[0,1]]}}";
        List<Map<String, Object>> replies = exchange(big, memory, run, CONFIGURE, run);
        // A non-negative integer; the 8 MiB kept with some slack for what the run freed.
        assertTrue(replies.get(1).get("peak_bytes") instanceof JsonNumber n && n.isIntegerKind() && n.longValue() >= 4 << 20,
                "peak_bytes: " + replies.get(1).get("peak_bytes"));
        assertTrue(replies.get(3).containsKey("results"));
        assertFalse(replies.get(3).containsKey("peak_bytes"));
    }

    @Test
    void bytesArriveDecodedFromTextAndBase64() {
        assertEquals("é", new String(Server.bytesOf(Map.of("text", "é")), StandardCharsets.UTF_8));
        byte[] b = Server.bytesOf(Map.of("bytes", "w6k="));
        assertEquals(2, b.length);
        assertEquals((byte) 0xc3, b[0]);
    }
}
