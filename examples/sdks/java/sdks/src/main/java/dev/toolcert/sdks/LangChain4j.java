package dev.toolcert.sdks;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.anthropic.AnthropicStreamingChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiResponsesStreamingChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.model.output.FinishReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * LangChain4j ({@code dev.langchain4j:langchain4j-open-ai} and {@code langchain4j-anthropic}): the
 * streaming chat models {@code OpenAiStreamingChatModel} (openai-chat),
 * {@code OpenAiResponsesStreamingChatModel} (openai-responses) and {@code AnthropicStreamingChatModel}
 * (anthropic), with the stream's tools as tool specifications, as
 * LangChain4j's low-level tools API shows: {@code chat(ChatRequest, StreamingChatResponseHandler)},
 * the partial responses shown as a UI would, and the {@code ChatResponse} handed to
 * {@code onCompleteResponse}.
 *
 * <p>What it reports: each {@code ToolExecutionRequest} of the response's {@code AiMessage}; LangChain4j
 * hands the arguments as a string, which the caller parses strictly. Text: {@code aiMessage.text()}.
 * The stop signal: the response's {@code FinishReason} (STOP and TOOL_EXECUTION complete, LENGTH and
 * CONTENT_FILTER cut, OTHER or none unfinished). {@code onError} is the turn's error. Cancel: the
 * caller stops waiting (and cancels through the streaming handle when it has one).
 */
public final class LangChain4j extends SdkAdapter {
    private StreamingChatModel openai;
    private StreamingChatModel responses;
    private StreamingChatModel anthropic;

    @Override
    public String name() {
        return "langchain4j";
    }

    @Override
    public List<String> dialects() {
        return List.of("anthropic", "openai-chat", "openai-responses");
    }

    @Override
    public String version() {
        return Harness.pinned("dev.langchain4j", "langchain4j-open-ai") + " "
                + Harness.pinned("dev.langchain4j", "langchain4j-anthropic");
    }

    @Override
    public String homepage() {
        return "https://docs.langchain4j.dev/";
    }

    @Override
    public String policyDoc() {
        return "https://docs.langchain4j.dev/tutorials/response-streaming";
    }

    @Override
    public String classify(Throwable e) {
        // The Anthropic model raises this for an SSE `error` event (an overloaded server, say).
        if (Harness.inChain(e, "dev.langchain4j.model.anthropic.internal.api.AnthropicStreamingException")) {
            return "upstream";
        }
        return Harness.classifyCommon(e);
    }

    @Override
    public void setup(String baseUrl) {
        openai = OpenAiStreamingChatModel.builder().baseUrl(baseUrl + "/v1").apiKey("toolcert-dummy").modelName("gpt-4.1")
                .timeout(Duration.ofSeconds(60)).build();
        responses = OpenAiResponsesStreamingChatModel.builder().baseUrl(baseUrl + "/v1").apiKey("toolcert-dummy")
                .modelName("gpt-4.1").build();
        anthropic = AnthropicStreamingChatModel.builder().baseUrl(baseUrl + "/v1/").apiKey("toolcert-dummy")
                .modelName("claude-sonnet-4-5").maxTokens(4096).timeout(Duration.ofSeconds(60)).build();
    }

    @Override
    public Outcome run(Turn turn) throws Throwable {
        List<ToolSpecification> specs = new ArrayList<>();
        for (Turn.Tool t : turn.tools) {
            // The request's schema does not change what the model streams back: an empty object schema.
            specs.add(ToolSpecification.builder().name(t.name()).parameters(JsonObjectSchema.builder().build()).build());
        }
        ChatRequest.Builder request = ChatRequest.builder().messages(UserMessage.from("toolcert"));
        if (!specs.isEmpty()) {
            request.toolSpecifications(specs);
        }
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        turn.onCancel(() -> done.completeExceptionally(new CancellationException("the caller cancelled the stream")));
        StreamingChatModel model = switch (turn.dialect) {
            case "anthropic" -> anthropic;
            case "openai-responses" -> responses;
            default -> openai;
        };
        model.chat(request.build(), new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(PartialResponse partial, PartialResponseContext context) {
                turn.shown(partial.text());
                turn.onCancel(() -> context.streamingHandle().cancel());
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        });
        ChatResponse response;
        try {
            response = done.get();
        } catch (ExecutionException e) {
            throw e.getCause();
        }
        Outcome out = new Outcome();
        FinishReason reason = response.finishReason();
        out.stop = reason == null ? Outcome.UNFINISHED : switch (reason) {
            case STOP, TOOL_EXECUTION -> Outcome.COMPLETE;
            case LENGTH, CONTENT_FILTER -> Outcome.CUT;
            default -> Outcome.UNFINISHED;
        };
        AiMessage message = response.aiMessage();
        out.text = message.text() == null ? "" : message.text();
        for (ToolExecutionRequest r : message.toolExecutionRequests()) {
            out.calls.add(Outcome.Call.fromArgumentText(r.id(), r.name(), r.arguments()));
        }
        return out;
    }
}
