package dev.toolcert.sdks;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.JsonValue;
import com.anthropic.core.ObjectMappers;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.ContentBlock;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.Tool;
import com.anthropic.models.messages.ToolUseBlock;
import dev.toolcert.adapter.Emit;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code com.anthropic:anthropic-java}: Messages streaming with {@code MessageAccumulator}, as the SDK's
 * README shows it: iterate {@code messages().createStreaming(...).stream()}, {@code accumulate} every
 * event (the text deltas shown as a UI would), then read {@code message()}.
 *
 * <p>What it reports: every {@code tool_use} block of the final message as dispatchable with the
 * block's {@code input} exactly as the SDK hands it over (a {@code JsonValue} the SDK parsed, taken as
 * the SDK's own mapper's tree, so each number is the Java value the SDK holds); text = the
 * text blocks joined; layout = the order of text and tool_use blocks; the stop signal: the message's
 * {@code stop_reason}. An SSE {@code error} event the SDK raises ({@code SseException}) is
 * {@code upstream}.
 */
public final class AnthropicJava extends SdkAdapter {
    private AnthropicClient client;

    @Override
    public String name() {
        return "anthropic-java";
    }

    @Override
    public List<String> dialects() {
        return List.of("anthropic");
    }

    @Override
    public String version() {
        return Harness.pinned("com.anthropic", "anthropic-java");
    }

    @Override
    public String homepage() {
        return "https://github.com/anthropics/anthropic-sdk-java";
    }

    @Override
    public String policyDoc() {
        return "https://docs.anthropic.com/en/api/handling-stop-reasons";
    }

    @Override
    public void setup(String baseUrl) {
        client = AnthropicOkHttpClient.builder().apiKey("toolcert-dummy").baseUrl(baseUrl).maxRetries(0).build();
    }

    @Override
    public String classify(Throwable e) {
        if (Harness.inChain(e, "com.anthropic.errors.SseException")) {
            return "upstream";
        }
        return Harness.classifyCommon(e);
    }

    @Override
    public Outcome run(Turn turn) {
        MessageCreateParams.Builder params = MessageCreateParams.builder().model("claude-sonnet-4-5").maxTokens(4096)
                .addUserMessage("toolcert");
        for (Turn.Tool t : turn.tools) {
            Map<String, JsonValue> schema = new LinkedHashMap<>();
            (t.schema() != null ? t.schema() : Map.<String, Object>of("type", "object"))
                    .forEach((k, v) -> schema.put(k, JsonValue.from(v)));
            params.addTool(Tool.builder().name(t.name())
                    .inputSchema(Tool.InputSchema.builder().additionalProperties(schema).build())
                    .build());
        }
        MessageAccumulator acc = MessageAccumulator.create();
        try (StreamResponse<RawMessageStreamEvent> stream = client.messages().createStreaming(params.build())) {
            turn.onCancel(stream::close);
            stream.stream().peek(acc::accumulate)
                    .flatMap(event -> event.contentBlockDelta().stream())
                    .flatMap(delta -> delta.delta().text().stream())
                    .forEach(text -> turn.shown(text.text()));
        }
        Message message = acc.message();
        Outcome out = new Outcome();
        out.stop = Outcome.stopSignal(message.stopReason().map(r -> r.asString()).orElse(null),
                Outcome.ANTHROPIC_COMPLETE, Outcome.ANTHROPIC_CUT);
        List<String> raws = argumentTexts(acc);
        StringBuilder text = new StringBuilder();
        List<Map<String, Object>> layout = new ArrayList<>();
        int position = 0;
        for (ContentBlock block : message.content()) {
            String raw = position < raws.size() ? raws.get(position) : null;
            position++;
            if (block.isText()) {
                String piece = block.asText().text();
                text.append(piece);
                layout.add(Emit.textSlot(piece));
            } else if (block.isToolUse()) {
                ToolUseBlock use = block.asToolUse();
                // The input as the SDK holds it: its tree, each number the Java value the SDK parsed.
                JsonNode input = ObjectMappers.jsonMapper().valueToTree(use._input());
                // No delta at all: no argument bytes, the `{}` of the start block.
                String buffer = raw == null && input.isObject() && input.isEmpty() ? "" : raw;
                out.calls.add(Outcome.Call.dispatch(use.id(), use.name(), plain(input), buffer));
                layout.add(Emit.callSlot(use.id()));
            }
        }
        out.text = text.toString();
        out.layout = layout;
        return out;
    }

    /**
     * The argument text the accumulator joined for each block, in the order of the message's content
     * (the buffer a call the documented caller withholds had). The accumulator keeps it in a private
     * map keyed by block index (as the Python adapter reads the SDK's private {@code __json_bufs});
     * empty when the SDK's layout differs, and the raw is then the input written back.
     */
    @SuppressWarnings("unchecked")
    private static List<String> argumentTexts(MessageAccumulator acc) {
        try {
            java.lang.reflect.Field content = MessageAccumulator.class.getDeclaredField("messageContent");
            java.lang.reflect.Field inputs = MessageAccumulator.class.getDeclaredField("messageContentInputJson");
            content.setAccessible(true);
            inputs.setAccessible(true);
            Map<Long, ?> blocks = (Map<Long, ?>) content.get(acc);
            Map<Long, ? extends CharSequence> json = (Map<Long, ? extends CharSequence>) inputs.get(acc);
            List<String> out = new ArrayList<>();
            for (Long index : new java.util.TreeSet<>(blocks.keySet())) {
                CharSequence buffer = json.get(index);
                out.add(buffer == null ? null : buffer.toString());
            }
            return out;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return List.of();
        }
    }

    /** A Jackson tree as plain Java values: each number the Java value the SDK parsed, each string as it is. */
    static Object plain(JsonNode node) {
        if (node.isObject()) {
            Map<String, Object> out = new LinkedHashMap<>();
            node.properties().forEach(e -> out.put(e.getKey(), plain(e.getValue())));
            return out;
        }
        if (node.isArray()) {
            List<Object> out = new ArrayList<>();
            node.forEach(x -> out.add(plain(x)));
            return out;
        }
        if (node.isNumber()) {
            return node.numberValue();
        }
        if (node.isTextual()) {
            return node.textValue();
        }
        if (node.isBoolean()) {
            return node.booleanValue();
        }
        return null;
    }
}
