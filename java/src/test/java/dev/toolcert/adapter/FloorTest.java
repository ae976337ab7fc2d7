package dev.toolcert.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The cost floor: the cheapest correct accumulator, served as toolcert bench runs it. */
class FloorTest {
    private static List<Map<String, Object>> exchange(String... requests) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        String in = String.join("\n", requests) + "\n";
        assertEquals(0, Floor.server().serve(new ByteArrayInputStream(in.getBytes(StandardCharsets.UTF_8)), out));
        List<Map<String, Object>> replies = new ArrayList<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            replies.add(Server.asMap(Json.parse(line)));
        }
        return replies;
    }

    private static final String START = "{\"cmd\":\"start\",\"version\":1,\"toolcert\":\"0.1.0\"}";
    private static final String CONFIGURE = "{\"cmd\":\"configure\",\"level\":\"events\",\"dialect\":\"anthropic\",\"quirks\":{}}";

    private static String run(String units, String order) {
        return "{\"cmd\":\"run\",\"seq\":1,\"case\":{\"streams\":[{\"units\":[" + units + "],\"end\":\"eof\"}],\"order\":" + order + "}}";
    }

    private static final String CALL = "{\"type\":\"call_start\",\"index\":0,\"call_id\":\"c1\",\"name\":\"f\"},"
            + "{\"type\":\"args_delta\",\"index\":0,\"fragment\":\"{\\\"order_id\\\": \\\"A-44\"},"
            + "{\"type\":\"args_delta\",\"index\":0,\"fragment\":\"71\\\", \\\"n\\\": 1.0}\"},"
            + "{\"type\":\"call_stop\",\"index\":0}";

    @Test
    void dispatchesATwoFragmentCallWithItsTime() throws Exception {
        List<Map<String, Object>> replies = exchange(START, CONFIGURE,
                run(CALL + ",{\"type\":\"stop\",\"reason\":\"tool_use\"}", "[[0,0],[0,1],[0,2],[0,3],[0,4],[0,5]]"));
        Map<String, Object> implementation = Server.asMap(replies.get(0).get("implementation"));
        assertEquals("toolcert-adapter-floor", implementation.get("name"));
        assertEquals(List.of("events"), implementation.get("levels"));
        Map<String, Object> reply = replies.get(2);
        Map<String, Object> result = Server.asMap(Server.asList(reply.get("results")).get(0));
        Map<String, Object> outcome = Server.asMap(Server.asList(result.get("outcomes")).get(0));
        assertEquals("dispatchable", outcome.get("outcome"));
        assertEquals("c1", outcome.get("call_id"));
        // The number as written: 1.0 stays 1.0.
        assertEquals("{\"order_id\":\"A-4471\",\"n\":1.0}", Json.write(outcome.get("args")));
        Map<String, Object> ending = Server.asMap(result.get("ending"));
        assertEquals("complete", ending.get("ending"));
        assertEquals("tool_use", ending.get("stop_reason"));
        assertTrue(reply.get("elapsed_ns") instanceof JsonNumber n && n.isIntegerKind() && n.longValue() >= 1, "elapsed_ns: " + reply.get("elapsed_ns"));
    }

    @Test
    void neverDispatchesFromACutOrUnfinishedTurn() throws Exception {
        List<Map<String, Object>> cut = exchange(CONFIGURE,
                run(CALL + ",{\"type\":\"stop\",\"reason\":\"max_tokens\"}", "[[0,0],[0,1],[0,2],[0,3],[0,4],[0,5]]"));
        List<Map<String, Object>> unfinished = exchange(CONFIGURE, run(CALL, "[[0,0],[0,1],[0,2],[0,3],[0,4]]"));
        for (var replies : List.of(cut, unfinished)) {
            Map<String, Object> result = Server.asMap(Server.asList(replies.get(1).get("results")).get(0));
            Map<String, Object> outcome = Server.asMap(Server.asList(result.get("outcomes")).get(0));
            assertEquals("failed", outcome.get("outcome"));
            assertEquals("{\"order_id\": \"A-4471\", \"n\": 1.0}", outcome.get("raw"));
        }
    }
}
