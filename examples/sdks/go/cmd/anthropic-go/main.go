// toolcert adapter for anthropic-sdk-go (github.com/anthropics/anthropic-sdk-go/v2),
// Messages streaming accumulated with Message.Accumulate.
//
// What it drives, per stream: client.Messages.NewStreaming on a client whose http.Client
// answers with the stream's exact chunks (harness.Transport), each event passed to
// message.Accumulate(event) as the SDK documents; an error Accumulate returns is the SDK
// refusing the stream (a careful caller checks it: the turn fails, unannounced_index for a
// block index it does not hold, malformed otherwise). The text shown is each text_delta.
// Then stream.Err().
//
// What it reports: every tool_use block of the accumulated message's Content. The SDK hands
// its input as a json.RawMessage, which the caller unmarshals: the adapter parses it
// strictly (harness.FromArgumentText). Text: the text blocks, with the layout of text and
// calls in block order. StopReason is the documented policy's stop signal. An error of the
// stream is a turn error: upstream for the *anthropic.Error (or the SDK's "received error
// while streaming") an `error` event raises, the common mapping otherwise.
//
//	toolcert certify --subject 'exec:examples/sdks/go/bin/anthropic-go' --level bytes --dialect anthropic --no-schema
package main

import (
	"context"
	"errors"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	toolcert "github.com/toolcert/toolcert/go"

	"github.com/toolcert/toolcert/examples/sdks/go/harness"
)

const module = "github.com/anthropics/anthropic-sdk-go/v2"

type adapter struct{ client anthropic.Client }

func (a *adapter) Implementation() toolcert.Implementation {
	return toolcert.Implementation{
		Name:     "anthropic-sdk-go Message.Accumulate",
		Version:  module + "@" + harness.ModuleVersion(module),
		Homepage: "https://pkg.go.dev/" + module,
		Dialects: []string{"anthropic"},
	}
}

func (a *adapter) PolicyDoc() string {
	return "https://docs.anthropic.com/en/api/handling-stop-reasons"
}

func (a *adapter) Setup(t *harness.Transport) error {
	a.client = anthropic.NewClient(
		option.WithAPIKey("toolcert"),
		option.WithBaseURL("http://toolcert.invalid/"),
		option.WithHTTPClient(t.Client()),
		option.WithMaxRetries(0),
	)
	return nil
}

// accumulateError: Message.Accumulate refused an event.
type accumulateError struct{ err error }

func (e *accumulateError) Error() string { return "Message.Accumulate: " + e.err.Error() }
func (e *accumulateError) Unwrap() error { return e.err }

func (a *adapter) Run(ctx context.Context, tools []toolcert.Tool, _ string) harness.Outcome {
	var out harness.Outcome
	params := anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("toolcert"))},
	}
	for _, t := range harness.UniqueTools(tools) {
		schema := harness.ObjectSchema(t)
		in := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range schema {
			switch k {
			case "type":
			case "properties":
				in.Properties = v
			case "required":
				for _, r := range asSlice(v) {
					if s, ok := r.(string); ok {
						in.Required = append(in.Required, s)
					}
				}
			default:
				in.ExtraFields[k] = v
			}
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: t.Name, InputSchema: in}})
	}
	stream := a.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	message := anthropic.Message{}
	var shown strings.Builder
	for stream.Next() {
		event := stream.Current()
		if err := message.Accumulate(event); err != nil {
			out.Err = &accumulateError{err}
			out.Text = shown.String()
			return out
		}
		if event.Type == "content_block_delta" && event.Delta.Type == "text_delta" {
			shown.WriteString(event.Delta.Text)
		}
	}
	if err := stream.Err(); err != nil {
		out.Err = err
		out.Text = shown.String()
		return out
	}
	out.Stop = harness.StopSignal(string(message.StopReason), harness.AnthropicComplete, harness.AnthropicCut)
	out.Layout = []toolcert.Slot{}
	var text strings.Builder
	for _, block := range message.Content {
		switch block.Type {
		case "text":
			text.WriteString(block.Text)
			out.Layout = append(out.Layout, toolcert.Slot{Slot: "text", Text: block.Text})
		case "tool_use":
			out.Calls = append(out.Calls, harness.FromArgumentText(block.ID, block.Name, string(block.Input)))
			out.Layout = append(out.Layout, toolcert.Slot{Slot: "call", CallID: block.ID})
		}
	}
	out.Text = text.String()
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func (a *adapter) Classify(err error) string {
	if harness.TransportEnd(err) {
		return "incomplete"
	}
	var acc *accumulateError
	if errors.As(err, &acc) {
		if strings.Contains(acc.err.Error(), "but there are only") {
			return "unannounced_index"
		}
		return "malformed"
	}
	var api *anthropic.Error
	if errors.As(err, &api) || strings.HasPrefix(err.Error(), "received error while streaming") {
		return "upstream"
	}
	return harness.ClassifyCommon(err)
}

func main() { harness.Main(&adapter{}) }
