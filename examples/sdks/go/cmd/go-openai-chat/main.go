// toolcert adapter for go-openai (github.com/sashabaranov/go-openai), Chat Completions
// streaming.
//
// What it drives, per stream: client.CreateChatCompletionStream on a client whose
// http.Client answers with the stream's exact chunks (harness.Transport), read with
// stream.Recv() until io.EOF. go-openai has no accumulator: its stream hands each chunk as a
// ChatCompletionStreamResponse, and the caller accumulates the tool calls as OpenAI's
// function calling guide shows ("Streaming": an entry of delta.tool_calls at an index not
// seen yet is the call, with its id and name; every later entry at that index appends its
// function.arguments). That loop is the caller's, kept to the guide's letter, so the
// findings of this subject are those of the SDK's reading (its SSE line reader, its chunk
// decoding) and of the guide's own accumulation: the README notes which is which.
//
// What it reports: every call so gathered, in order of first appearance, its arguments
// parsed strictly (harness.FromArgumentText). Text: every delta.content. The last
// finish_reason seen is the documented policy's stop signal. An error of the stream is a
// turn error: upstream for the *openai.APIError an error object raises, the common mapping
// otherwise.
//
//	toolcert certify --subject 'exec:examples/sdks/go/bin/go-openai-chat' --level bytes --dialect openai-chat --no-schema
package main

import (
	"context"
	"errors"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"
	toolcert "github.com/toolcert/toolcert/go"

	"github.com/toolcert/toolcert/examples/sdks/go/harness"
)

const module = "github.com/sashabaranov/go-openai"

type adapter struct{ client *openai.Client }

func (a *adapter) Implementation() toolcert.Implementation {
	return toolcert.Implementation{
		Name:     "go-openai CreateChatCompletionStream",
		Version:  module + "@" + harness.ModuleVersion(module),
		Homepage: "https://pkg.go.dev/" + module,
		Dialects: []string{"openai-chat"},
	}
}

func (a *adapter) PolicyDoc() string {
	return "https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices"
}

func (a *adapter) Setup(t *harness.Transport) error {
	config := openai.DefaultConfig("toolcert")
	config.BaseURL = "http://toolcert.invalid/v1"
	config.HTTPClient = t.Client()
	a.client = openai.NewClientWithConfig(config)
	return nil
}

type gathered struct {
	id, name string
	args     strings.Builder
}

func (a *adapter) Run(ctx context.Context, tools []toolcert.Tool, _ string) harness.Outcome {
	var out harness.Outcome
	req := openai.ChatCompletionRequest{
		Model:    openai.GPT4Dot1,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "toolcert"}},
	}
	for _, t := range harness.UniqueTools(tools) {
		req.Tools = append(req.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: "toolcert tool " + t.Name, Parameters: harness.ObjectSchema(t),
		}})
	}
	var text strings.Builder
	stream, err := a.client.CreateChatCompletionStream(ctx, req)
	if err != nil {
		out.Err = err
		return out
	}
	defer stream.Close()
	// The guide's dictionary keyed by index; a missing index is a key of its own, as
	// Python's None would be.
	calls := map[int]*gathered{}
	var order []int
	finish := ""
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			out.Err = err
			out.Text = text.String()
			return out
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		choice := chunk.Choices[0]
		text.WriteString(choice.Delta.Content)
		if choice.FinishReason != "" {
			finish = string(choice.FinishReason)
		}
		for _, tc := range choice.Delta.ToolCalls {
			index := -1
			if tc.Index != nil {
				index = *tc.Index
			}
			c, seen := calls[index]
			if !seen {
				c = &gathered{id: tc.ID, name: tc.Function.Name}
				calls[index] = c
				order = append(order, index)
			}
			c.args.WriteString(tc.Function.Arguments)
		}
	}
	out.Text = text.String()
	out.Stop = harness.StopSignal(finish, harness.ChatComplete, harness.ChatCut)
	for _, i := range order {
		c := calls[i]
		out.Calls = append(out.Calls, harness.FromArgumentText(c.id, c.name, c.args.String()))
	}
	return out
}

func (a *adapter) Classify(err error) string {
	if harness.TransportEnd(err) {
		return "incomplete"
	}
	var api *openai.APIError
	if errors.As(err, &api) {
		return "upstream"
	}
	return harness.ClassifyCommon(err)
}

func main() { harness.Main(&adapter{}) }
