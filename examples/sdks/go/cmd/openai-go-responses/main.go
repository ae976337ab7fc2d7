// toolcert adapter for openai-go (github.com/openai/openai-go/v3), Responses streaming.
//
// What it drives, per stream: client.Responses.NewStreaming on a client whose http.Client
// answers with the stream's exact chunks (harness.Transport), iterated as the SDK's README
// shows (`for stream.Next() { event := stream.Current() ... }`, then stream.Err()), showing
// each response.output_text.delta. The SDK has no accumulator for HTTP streams (its
// responses.ResponseAccumulator is for the WebSocket transport), so the final result a
// caller has is the Response the terminal event carries: response.completed,
// response.incomplete or response.failed, the last one seen. A stream without one hands the
// caller nothing.
//
// What it reports: each function_call item of that Response's output, its `arguments`
// string parsed strictly (harness.FromArgumentText); an item the SDK hands with status
// in_progress or incomplete is a flag on that call (failed abandoned, truncated). Text: every
// response.output_text.delta the stream showed; the layout: text parts and calls in output order.
// Response.status is the documented policy's stop signal. An error of the stream is a turn
// error: upstream for the *ssestream.StreamError an `error` object raises, the common
// mapping otherwise.
//
//	toolcert certify --subject 'exec:examples/sdks/go/bin/openai-go-responses' --level bytes --dialect openai-responses --no-schema
package main

import (
	"context"
	"errors"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	toolcert "github.com/toolcert/toolcert/go"

	"github.com/toolcert/toolcert/examples/sdks/go/harness"
)

const module = "github.com/openai/openai-go/v3"

type adapter struct{ client openai.Client }

func (a *adapter) Implementation() toolcert.Implementation {
	return toolcert.Implementation{
		Name:     "openai-go Responses.NewStreaming",
		Version:  module + "@" + harness.ModuleVersion(module),
		Homepage: "https://pkg.go.dev/" + module,
		Dialects: []string{"openai-responses"},
	}
}

func (a *adapter) PolicyDoc() string {
	return "https://platform.openai.com/docs/api-reference/responses/object#responses/object-status"
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
	params := responses.ResponseNewParams{
		Model: "gpt-4.1",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("toolcert")},
	}
	for _, t := range harness.UniqueTools(tools) {
		params.Tools = append(params.Tools, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
			Name:       t.Name,
			Parameters: harness.ObjectSchema(t),
			Strict:     openai.Bool(false),
		}})
	}
	stream := a.client.Responses.NewStreaming(ctx, params)
	defer stream.Close()
	var shown strings.Builder
	var final *responses.Response
	for stream.Next() {
		event := stream.Current()
		switch event.Type {
		case "response.output_text.delta":
			shown.WriteString(event.Delta)
		case "response.completed", "response.incomplete", "response.failed":
			r := event.Response
			final = &r
		}
	}
	if err := stream.Err(); err != nil {
		out.Err = err
		out.Text = shown.String()
		return out
	}
	if final == nil {
		out.Text = shown.String()
		return out
	}
	out.Stop = harness.StopSignal(string(final.Status), harness.ResponsesComplete, harness.ResponsesCut)
	out.Layout = []toolcert.Slot{}
	for _, item := range final.Output {
		switch item.Type {
		case "message":
			for _, part := range item.AsMessage().Content {
				if part.Type == "output_text" {
					out.Layout = append(out.Layout, toolcert.Slot{Slot: "text", Text: part.Text})
				}
			}
		case "function_call":
			fc := item.AsFunctionCall()
			call := harness.FromArgumentText(fc.CallID, fc.Name, fc.Arguments)
			switch fc.Status {
			case "in_progress":
				call.Flag = "abandoned"
			case "incomplete":
				call.Flag = "truncated"
			}
			out.Calls = append(out.Calls, call)
			out.Layout = append(out.Layout, toolcert.Slot{Slot: "call", CallID: fc.CallID})
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
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return "upstream"
	}
	return harness.ClassifyCommon(err)
}

func main() { harness.Main(&adapter{}) }
