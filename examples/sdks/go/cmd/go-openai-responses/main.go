// toolcert adapter for go-openai (github.com/sashabaranov/go-openai), Responses streaming.
//
// What it drives, per stream: client.CreateResponseStream on a client whose http.Client
// answers with the stream's exact chunks (harness.Transport), read as the SDK's README
// shows ("Stream output": stream.Recv() until io.EOF, printing each
// response.output_text.delta). go-openai has no accumulator, so the final result a caller
// has is the Response the terminal event carries (response.completed, response.incomplete
// or response.failed, the last one seen); a stream without one hands the caller nothing.
//
// What it reports: each function_call item of that Response's output (go-openai decodes
// Output as []any: each item a map), its `arguments` string parsed strictly
// (harness.FromArgumentText); an item with status in_progress or incomplete is a flag on
// that call (failed abandoned, truncated). Text: every response.output_text.delta the
// stream showed; the layout: text parts and calls in output order. The Response's status is the
// documented policy's stop signal. An error of the stream is a turn error: upstream for the
// *openai.APIError an error object raises, the common mapping otherwise.
//
//	toolcert certify --subject 'exec:examples/sdks/go/bin/go-openai-responses' --level bytes --dialect openai-responses --no-schema
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
		Name:     "go-openai CreateResponseStream",
		Version:  module + "@" + harness.ModuleVersion(module),
		Homepage: "https://pkg.go.dev/" + module,
		Dialects: []string{"openai-responses"},
	}
}

func (a *adapter) PolicyDoc() string {
	return "https://platform.openai.com/docs/api-reference/responses/object#responses/object-status"
}

func (a *adapter) Setup(t *harness.Transport) error {
	config := openai.DefaultConfig("toolcert")
	config.BaseURL = "http://toolcert.invalid/v1"
	config.HTTPClient = t.Client()
	a.client = openai.NewClientWithConfig(config)
	return nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func (a *adapter) Run(ctx context.Context, tools []toolcert.Tool, _ string) harness.Outcome {
	var out harness.Outcome
	req := openai.CreateResponseRequest{Model: openai.GPT4Dot1, Input: "toolcert"}
	for _, t := range harness.UniqueTools(tools) {
		req.Tools = append(req.Tools, openai.NewResponseFunctionTool(openai.FunctionDefinition{
			Name: t.Name, Parameters: harness.ObjectSchema(t),
		}))
	}
	var shown strings.Builder
	stream, err := a.client.CreateResponseStream(ctx, req)
	if err != nil {
		out.Err = err
		return out
	}
	defer stream.Close()
	var final *openai.CreateResponseResponse
	for {
		event, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			out.Err = err
			out.Text = shown.String()
			return out
		}
		switch event.Type {
		case openai.ResponseStreamEventOutputTextDelta:
			shown.WriteString(event.Delta)
		case openai.ResponseStreamEventCompleted, openai.ResponseStreamEventIncomplete, openai.ResponseStreamEventFailed:
			final = event.Response
		}
	}
	if final == nil {
		out.Text = shown.String()
		return out
	}
	out.Stop = harness.StopSignal(string(final.Status), harness.ResponsesComplete, harness.ResponsesCut)
	out.Layout = []toolcert.Slot{}
	for _, raw := range final.Output {
		item, _ := raw.(map[string]any)
		switch str(item, "type") {
		case "message":
			content, _ := item["content"].([]any)
			for _, p := range content {
				part, _ := p.(map[string]any)
				if str(part, "type") == "output_text" {
					out.Layout = append(out.Layout, toolcert.Slot{Slot: "text", Text: str(part, "text")})
				}
			}
		case "function_call":
			call := harness.FromArgumentText(str(item, "call_id"), str(item, "name"), str(item, "arguments"))
			switch str(item, "status") {
			case "in_progress":
				call.Flag = "abandoned"
			case "incomplete":
				call.Flag = "truncated"
			}
			out.Calls = append(out.Calls, call)
			out.Layout = append(out.Layout, toolcert.Slot{Slot: "call", CallID: str(item, "call_id")})
		}
	}
	// The text is what the stream showed: the SDK decodes each delta for the caller, while
	// the terminal Response is the server's own summary (a failed one may list no output).
	out.Text = shown.String()
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
