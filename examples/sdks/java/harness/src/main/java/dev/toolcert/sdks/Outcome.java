package dev.toolcert.sdks;

import dev.toolcert.adapter.Json;
import dev.toolcert.adapter.NotJson;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one stream gave the caller: the calls of the SDK's final result, the text, optionally the
 * block layout, and the turn's stop signal as the SDK hands it ({@link #stop}: COMPLETE, CUT or
 * UNFINISHED, what the {@code documented} caller policy checks).
 */
public final class Outcome {
    public static final String COMPLETE = "complete";
    public static final String CUT = "truncated";
    public static final String UNFINISHED = "abandoned";

    /** The stop signals of each dialect (docs/SPEC.md section 2). */
    public static final Set<String> ANTHROPIC_COMPLETE = Set.of("tool_use", "end_turn", "stop_sequence", "pause_turn");
    public static final Set<String> ANTHROPIC_CUT = Set.of("max_tokens", "refusal", "model_context_window_exceeded");
    public static final Set<String> CHAT_COMPLETE = Set.of("tool_calls", "stop", "function_call");
    public static final Set<String> CHAT_CUT = Set.of("length", "content_filter");
    public static final Set<String> RESPONSES_COMPLETE = Set.of("completed");
    public static final Set<String> RESPONSES_CUT = Set.of("incomplete");

    public final List<Call> calls = new ArrayList<>();
    public String text = "";
    public List<Map<String, Object>> layout;
    public String stop;

    /** What a stop reason, finish reason or status says; missing or unknown is UNFINISHED (the caller does not run the calls). */
    public static String stopSignal(String value, Set<String> complete, Set<String> cut) {
        if (value != null && complete.contains(value)) {
            return COMPLETE;
        }
        if (value != null && cut.contains(value)) {
            return CUT;
        }
        return UNFINISHED;
    }

    /**
     * One call as the SDK handed it over; {@code raw} is the SDK's argument text when it keeps one;
     * {@code reason}, for a call the SDK marked as not runnable: unparseable, abandoned or truncated.
     */
    public record Call(String callId, String name, boolean dispatch, Object value, String raw, String reason) {
        /** A call the SDK offers to run with {@code args} (a JSON value: maps, lists, numbers...). */
        public static Call dispatch(String callId, String name, Object args, String raw) {
            return new Call(callId, name, true, args, raw, null);
        }

        /** A call whose text the caller cannot parse (or the SDK flagged as invalid), with its raw text. */
        public static Call unparseable(String callId, String name, String raw) {
            return new Call(callId, name, false, raw, raw, "unparseable");
        }

        /** A call the SDK marked as unfinished ({@code abandoned}) or cut ({@code truncated}). */
        public static Call marked(String callId, String name, String raw, String reason) {
            return new Call(callId, name, false, raw, raw, reason);
        }

        /**
         * A call whose SDK hands the arguments as text: the caller parses them strictly (RFC 8259, numbers
         * kept as written), so parsing is never the finding. Any one JSON document is offered as written;
         * {@code ""} (no argument bytes) is {@code {}}; anything else is unparseable.
         */
        public static Call fromArgumentText(String callId, String name, String text) {
            if (text == null || text.isEmpty()) {
                return dispatch(callId, name, Map.of(), text == null ? "" : text);
            }
            try {
                return dispatch(callId, name, Json.parse(text), text);
            } catch (NotJson e) {
                return unparseable(callId, name, text);
            }
        }
    }
}
