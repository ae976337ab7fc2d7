// toolcert adapter for openai-go (github.com/openai/openai-go/v3), Chat Completions
// streaming with its ChatCompletionAccumulator.
//
// What it drives, per stream: client.Chat.Completions.NewStreaming on a client whose
// http.Client answers with the stream's exact chunks (harness.Transport); every chunk goes to
// acc.AddChunk, as the SDK documents (a chunk AddChunk rejects is an error the SDK signals:
// the turn fails with class malformed); the text the caller shows is each chunk's
// delta.content. Then stream.Err().
//
// What it reports: every entry of acc.Choices[0].Message.ToolCalls. The SDK hands the
// arguments over as a string (Function.Arguments), so the adapter parses it as a careful
// caller would, strictly (harness.FromArgumentText). Text = Message.Content. The choice's
// finish_reason is the documented policy's stop signal. An error of the stream is a turn
// error: upstream for the *ssestream.StreamError an `error` object raises, the common
// mapping otherwise.
//
//	toolcert certify --subject 'exec:examples/sdks/go/bin/openai-go-chat' --level bytes --dialect openai-chat --no-schema
package main

import (
	"context"
	"errors"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
	toolcert "github.com/toolcert/toolcert/go"

	"github.com/toolcert/toolcert/examples/sdks/go/harness"
)

const module = "github.com/openai/openai-go/v3"

type adapter struct{ client openai.Client }

func (a *adapter) Implementation() toolcert.Implementation {
	return toolcert.Implementation{
		Name:     "openai-go ChatCompletionAccumulator",
		Version:  module + "@" + harness.ModuleVersion(module),
		Homepage: "https://pkg.go.dev/" + module,
		Dialects: []string{"openai-chat"},
	}
}

func (a *adapter) PolicyDoc() string {
	return "https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices"
}

func (a *adapter) Setup(t *harness.Transport) error {
	a.client = openai.NewClient(
		option.WithAPIKey("toolcert"),
		option.WithBaseURL("http://toolcert.invalid/v1/"),
		option.WithHTTPClient(t.Client()),
		option.WithMaxRetries(0),
	)
	return nil
}

func (a *adapter) Run(ctx context.Context, tools []toolcert.Tool, _ string) harness.Outcome {
	var out harness.Outcome
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-4.1",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("toolcert")},
	}
	for _, t := range harness.UniqueTools(tools) {
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String("toolcert tool " + t.Name),
			Parameters:  shared.FunctionParameters(harness.ObjectSchema(t)),
		}))
	}
	stream := a.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	acc := openai.ChatCompletionAccumulator{}
	var shown strings.Builder
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			out.Err = errRejected
			out.Text = shown.String()
			return out
		}
		if len(chunk.Choices) > 0 {
			shown.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		out.Err = err
		out.Text = shown.String()
		return out
	}
	if len(acc.Choices) == 0 {
		return out
	}
	choice := acc.Choices[0]
	out.Stop = harness.StopSignal(choice.FinishReason, harness.ChatComplete, harness.ChatCut)
	out.Text = choice.Message.Content
	for _, tc := range choice.Message.ToolCalls {
		out.Calls = append(out.Calls, harness.FromArgumentText(tc.ID, tc.Function.Name, tc.Function.Arguments))
	}
	return out
}

var errRejected = errors.New("ChatCompletionAccumulator.AddChunk rejected a chunk")

func (a *adapter) Classify(err error) string {
	if errors.Is(err, errRejected) {
		return "malformed"
	}
	if harness.TransportEnd(err) {
		return "incomplete"
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return "upstream"
	}
	return harness.ClassifyCommon(err)
}

func main() {
	harness.Main(&adapter{})
}
