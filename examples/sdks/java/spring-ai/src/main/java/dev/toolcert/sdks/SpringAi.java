package dev.toolcert.sdks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.ai.anthropic.AnthropicChatModel;
import org.springframework.ai.anthropic.AnthropicChatOptions;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.model.MessageAggregator;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import reactor.core.Disposable;

/**
 * Spring AI 2.0 ({@code spring-ai-openai}, {@code spring-ai-anthropic}): {@code ChatModel.stream(Prompt)}
 * with the stream's tools as tool callbacks in the prompt's options, the {@code Flux<ChatResponse>}
 * aggregated with Spring AI's {@code MessageAggregator} (the text of each chunk shown as a UI would),
 * and the aggregated {@code ChatResponse} read as a caller does. Spring AI 2.0's chat models do not run
 * tools themselves (that moved to ChatClient's tool advisor), so the calls are the caller's to run.
 *
 * <p>What it reports: each {@code AssistantMessage.ToolCall} of the aggregated response's generations;
 * Spring AI hands the arguments as a string, which the caller parses strictly. Text: the aggregated
 * output's text. The stop signal: the generation's {@code finishReason} (the provider's value, in any
 * case). An error the Flux signals is the turn's error. Cancel: the caller disposes the subscription.
 */
public final class SpringAi extends SdkAdapter {
    private ChatModel openai;
    private ChatModel anthropic;

    @Override
    public String name() {
        return "spring-ai";
    }

    @Override
    public List<String> dialects() {
        return List.of("anthropic", "openai-chat");
    }

    @Override
    public String version() {
        return Harness.pinned("org.springframework.ai", "spring-ai-openai") + " "
                + Harness.pinned("org.springframework.ai", "spring-ai-anthropic") + " "
                + Harness.pinned("com.openai", "openai-java-core") + " "
                + Harness.pinned("com.anthropic", "anthropic-java-core");
    }

    @Override
    public String homepage() {
        return "https://docs.spring.io/spring-ai/reference/";
    }

    @Override
    public String policyDoc() {
        return "https://docs.spring.io/spring-ai/reference/api/chatmodel.html";
    }

    @Override
    public void setup(String baseUrl) {
        openai = OpenAiChatModel.builder()
                .options(OpenAiChatOptions.builder().baseUrl(baseUrl + "/v1").apiKey("toolcert-dummy").model("gpt-4.1")
                        .maxRetries(0).timeout(Duration.ofSeconds(60)).build())
                .build();
        anthropic = AnthropicChatModel.builder()
                .options(AnthropicChatOptions.builder().baseUrl(baseUrl).apiKey("toolcert-dummy").model("claude-sonnet-4-5")
                        .maxTokens(4096).maxRetries(0).timeout(Duration.ofSeconds(60)).build())
                .build();
    }

    @Override
    public String classify(Throwable e) {
        if (Harness.inChain(e, "com.openai.errors.SseException") || Harness.inChain(e, "com.anthropic.errors.SseException")) {
            return "upstream";
        }
        return Harness.classifyCommon(e);
    }

    /** A tool the model may call; Spring AI's chat model does not run it (the caller does). */
    private static ToolCallback callback(Turn.Tool t) {
        String schema = dev.toolcert.adapter.Json.write(t.schema() != null ? t.schema() : java.util.Map.of("type", "object"));
        ToolDefinition definition = ToolDefinition.builder().name(t.name()).description("toolcert tool " + t.name())
                .inputSchema(schema).build();
        return new ToolCallback() {
            @Override
            public ToolDefinition getToolDefinition() {
                return definition;
            }

            @Override
            public String call(String input) {
                return "ok";
            }
        };
    }

    private static final Set<String> COMPLETE = Set.of("tool_calls", "stop", "function_call", "tool_use", "end_turn",
            "stop_sequence", "pause_turn");
    private static final Set<String> CUT = Set.of("length", "content_filter", "max_tokens", "refusal",
            "model_context_window_exceeded");

    @Override
    public Outcome run(Turn turn) throws Throwable {
        List<ToolCallback> callbacks = new ArrayList<>();
        for (Turn.Tool t : turn.tools) {
            callbacks.add(callback(t));
        }
        boolean isAnthropic = "anthropic".equals(turn.dialect);
        ChatOptions options = isAnthropic
                ? AnthropicChatOptions.builder().toolCallbacks(callbacks).build()
                : OpenAiChatOptions.builder().toolCallbacks(callbacks).build();
        ChatModel model = isAnthropic ? anthropic : openai;
        AtomicReference<ChatResponse> aggregated = new AtomicReference<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        Disposable subscription = new MessageAggregator()
                .aggregate(model.stream(new Prompt(List.of(new UserMessage("toolcert")), options)), aggregated::set)
                .subscribe(chunk -> {
                    if (chunk.getResult() != null && chunk.getResult().getOutput() != null) {
                        turn.shown(chunk.getResult().getOutput().getText());
                    }
                }, done::completeExceptionally, () -> done.complete(null));
        turn.onCancel(() -> {
            subscription.dispose();
            done.completeExceptionally(new CancellationException("the caller cancelled the stream"));
        });
        try {
            done.get();
        } catch (ExecutionException e) {
            throw e.getCause();
        }
        Outcome out = new Outcome();
        ChatResponse response = aggregated.get();
        if (response == null || response.getResults() == null) {
            out.stop = Outcome.UNFINISHED;
            return out;
        }
        StringBuilder text = new StringBuilder();
        String finish = null;
        for (Generation g : response.getResults()) {
            AssistantMessage message = g.getOutput();
            if (g.getMetadata() != null && g.getMetadata().getFinishReason() != null) {
                finish = g.getMetadata().getFinishReason();
            }
            if (message == null) {
                continue;
            }
            if (message.getText() != null) {
                text.append(message.getText());
            }
            for (AssistantMessage.ToolCall call : message.getToolCalls()) {
                out.calls.add(Outcome.Call.fromArgumentText(call.id(), call.name(), call.arguments()));
            }
        }
        out.text = text.toString();
        out.stop = Outcome.stopSignal(finish == null ? null : finish.toLowerCase(Locale.ROOT), COMPLETE, CUT);
        return out;
    }
}
