package dev.toolcert.sdks;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessage;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseOutputMessage;
import com.openai.models.responses.ResponseStreamEvent;
import dev.toolcert.adapter.Emit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code com.openai:openai-java}: Chat Completions streaming with {@code ChatCompletionAccumulator}, and
 * Responses streaming with {@code ResponseAccumulator}, as the SDK's README shows them: iterate
 * {@code createStreaming(...).stream()}, {@code accumulate} every event (the text deltas shown as a UI
 * would), then read {@code chatCompletion()} / {@code response()}.
 *
 * <p>What it reports. Chat: each function tool call of {@code choices[0].message.toolCalls()}; the SDK
 * hands the arguments as a string, which the caller parses strictly ({@link Outcome.Call#fromArgumentText}).
 * Text: {@code message.content()}. The stop signal: {@code finish_reason}. Responses: each
 * {@code function_call} item of {@code output()} ({@code status} in_progress: failed(abandoned),
 * incomplete: failed(truncated), as the SDK marks it), the output_text parts as text, the items' order
 * as layout; the stop signal: {@code response.status}. An SSE {@code error} event the SDK raises
 * ({@code SseException}) is {@code upstream}.
 */
public final class OpenAiJava extends SdkAdapter {
    private OpenAIClient client;

    @Override
    public String name() {
        return "openai-java";
    }

    @Override
    public List<String> dialects() {
        return List.of("openai-chat", "openai-responses");
    }

    @Override
    public String version() {
        return Harness.pinned("com.openai", "openai-java");
    }

    @Override
    public String homepage() {
        return "https://github.com/openai/openai-java";
    }

    @Override
    public String policyDoc() {
        return "https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices";
    }

    @Override
    public void setup(String baseUrl) {
        client = OpenAIOkHttpClient.builder().apiKey("toolcert-dummy").baseUrl(baseUrl + "/v1").maxRetries(0).build();
    }

    @Override
    public String classify(Throwable e) {
        if (Harness.inChain(e, "com.openai.errors.SseException")) {
            return "upstream";
        }
        return Harness.classifyCommon(e);
    }

    static Map<String, JsonValue> schemaOf(Turn.Tool t) {
        Map<String, JsonValue> out = new LinkedHashMap<>();
        Map<String, Object> schema = t.schema() != null ? t.schema() : Map.of("type", "object");
        schema.forEach((k, v) -> out.put(k, JsonValue.from(v)));
        return out;
    }

    @Override
    public Outcome run(Turn turn) {
        return "openai-responses".equals(turn.dialect) ? responses(turn) : chat(turn);
    }

    private Outcome chat(Turn turn) {
        ChatCompletionCreateParams.Builder params = ChatCompletionCreateParams.builder().model("gpt-4.1").addUserMessage("toolcert");
        for (Turn.Tool t : turn.tools) {
            params.addTool(ChatCompletionFunctionTool.builder()
                    .function(FunctionDefinition.builder().name(t.name())
                            .parameters(FunctionParameters.builder().additionalProperties(schemaOf(t)).build())
                            .build())
                    .build());
        }
        ChatCompletionAccumulator acc = ChatCompletionAccumulator.create();
        try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params.build())) {
            turn.onCancel(stream::close);
            // The text as a UI shows it, as the README's example reads it, but without its getters that
            // throw on a chunk without `choices` (a usage chunk): only the accumulator is judged.
            stream.stream().peek(acc::accumulate)
                    .flatMap(chunk -> chunk._choices().asKnown().orElse(List.of()).stream())
                    .flatMap(choice -> choice._delta().asKnown().stream())
                    .flatMap(delta -> delta._content().asKnown().stream())
                    .forEach(turn::shown);
        }
        ChatCompletion completion = acc.chatCompletion();
        Outcome out = new Outcome();
        if (completion.choices().isEmpty()) {
            return out;
        }
        ChatCompletion.Choice choice = completion.choices().get(0);
        out.stop = Outcome.stopSignal(finishReason(choice), Outcome.CHAT_COMPLETE, Outcome.CHAT_CUT);
        ChatCompletionMessage message = choice.message();
        out.text = message.content().orElse("");
        for (ChatCompletionMessageToolCall tc : message.toolCalls().orElse(List.of())) {
            if (tc.isFunction()) {
                ChatCompletionMessageFunctionToolCall f = tc.asFunction();
                out.calls.add(Outcome.Call.fromArgumentText(f.id(), f.function().name(), f.function().arguments()));
            }
        }
        return out;
    }

    // The finish reason the SDK hands over; a completion without one has none (the getter throws).
    private static String finishReason(ChatCompletion.Choice choice) {
        try {
            return choice.finishReason().asString();
        } catch (com.openai.errors.OpenAIInvalidDataException e) {
            return null;
        }
    }

    private Outcome responses(Turn turn) {
        ResponseCreateParams.Builder params = ResponseCreateParams.builder().model("gpt-4.1").input("toolcert");
        for (Turn.Tool t : turn.tools) {
            params.addTool(FunctionTool.builder().name(t.name())
                    .parameters(FunctionTool.Parameters.builder().additionalProperties(schemaOf(t)).build())
                    .strict(false)
                    .build());
        }
        ResponseAccumulator acc = ResponseAccumulator.create();
        try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(params.build())) {
            turn.onCancel(stream::close);
            stream.stream().peek(acc::accumulate)
                    .flatMap(event -> event.outputTextDelta().stream())
                    .forEach(delta -> turn.shown(delta.delta()));
        }
        Response response = acc.response();
        Outcome out = new Outcome();
        out.stop = Outcome.stopSignal(response.status().map(s -> s.asString()).orElse(null),
                Outcome.RESPONSES_COMPLETE, Outcome.RESPONSES_CUT);
        StringBuilder text = new StringBuilder();
        List<Map<String, Object>> layout = new ArrayList<>();
        for (ResponseOutputItem item : response.output()) {
            if (item.isMessage()) {
                ResponseOutputMessage m = item.asMessage();
                for (ResponseOutputMessage.Content part : m.content()) {
                    if (part.isOutputText()) {
                        text.append(part.asOutputText().text());
                        layout.add(Emit.textSlot(part.asOutputText().text()));
                    }
                }
            } else if (item.isFunctionCall()) {
                ResponseFunctionToolCall f = item.asFunctionCall();
                layout.add(Emit.callSlot(f.callId()));
                String status = f.status().map(s -> s.asString()).orElse(null);
                if ("in_progress".equals(status) || "incomplete".equals(status)) {
                    // The SDK marks this very call as unfinished: the caller does not run it.
                    out.calls.add(Outcome.Call.marked(f.callId(), f.name(), f.arguments(),
                            "in_progress".equals(status) ? "abandoned" : "truncated"));
                } else {
                    out.calls.add(Outcome.Call.fromArgumentText(f.callId(), f.name(), f.arguments()));
                }
            }
        }
        out.text = text.toString();
        out.layout = layout;
        return out;
    }
}
