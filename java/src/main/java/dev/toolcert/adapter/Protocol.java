package dev.toolcert.adapter;

import java.util.List;
import java.util.Set;

/** The names docs/PROTOCOL.md (version 1) fixes: levels, dialects, wire behaviours, error classes, caps. */
public final class Protocol {
    private Protocol() {}

    public static final int VERSION = 1;
    public static final List<String> LEVELS = List.of("events", "wire", "bytes");
    /** The dialects of the wire and bytes levels; Bedrock (binary framing) only at the bytes level. */
    public static final List<String> DIALECTS = List.of("anthropic", "openai-chat", "openai-responses");
    public static final List<String> BYTES_ONLY_DIALECTS = List.of("bedrock");
    /**
     * Every wire behaviour of the server profiles (docs/SPEC.md, "Server profiles"). toolcert runs a
     * profile only when the adapter declares all its behaviours; an adapter that hands the bytes to
     * an SDK declares them all (an SDK reads whatever comes).
     */
    public static final List<String> QUIRKS = List.of(
            "chat_index_zero",
            "chat_repeat_fields",
            "chat_repeat_id",
            "chat_empty_continuations",
            "chat_no_index",
            "chat_whole_calls",
            "chat_sparse_index",
            "chat_split_entries",
            "chat_repeat_on_finish",
            "chat_content_filters",
            "chat_late_name",
            "responses_done_only",
            "responses_rotating_item_id",
            "responses_hosted_items",
            "anthropic_input_in_start",
            "anthropic_content_in_start",
            "gemini_partial_args",
            "hostile");
    /** The turn error classes: compared by class, never by message. */
    public static final Set<String> ERROR_CLASSES = Set.of(
            "unannounced_index", "duplicate_announcement", "fragment_after_stop", "done_mismatch",
            "malformed", "upstream", "truncated", "incomplete", "limit", "other");
    /**
     * The caps an adapter may declare (docs/PROTOCOL.md, "Caps."): a stream past one may be refused
     * with a turn error of class {@code limit}.
     */
    public static final List<String> CAPS = List.of("calls", "argument_bytes", "fragments", "depth");
    /** Stop reasons that say the output was cut: nothing of such a turn may be dispatched. */
    public static final Set<String> TRUNCATING = Set.of("max_tokens", "refusal", "length", "content_filter", "incomplete");
    /** How a turn can end, as an accumulator says it ({@link Emit#ending}). */
    public static final List<String> ENDINGS = List.of("complete", "truncated", "abandoned", "errored");
    /** How a call that is not run failed. */
    public static final List<String> FAILURE_REASONS = List.of("abandoned", "truncated", "unparseable");
}
