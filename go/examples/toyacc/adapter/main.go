// The toolcert adapter for toyacc, at the events level (--buggy: the trimming variant).
package main

import (
	"errors"
	"os"
	"slices"

	"example.com/toyacc"
	toolcert "github.com/toolcert/toolcert/go"
)

type adapter struct{ acc *toyacc.Accumulator }

func (a adapter) Feed(e toolcert.Event, out *toolcert.Emit) error {
	var err error
	switch e.Type {
	case "text_delta":
		out.Text(e.Text)
	case "call_start":
		err = a.acc.Start(e.Index, e.CallID, e.Name)
	case "args_delta":
		err = a.acc.Append(e.Index, e.Fragment)
	case "call_stop":
		err = a.acc.Close(e.Index, e.Arguments)
	case "stop":
		err = a.acc.Stop(e.Reason)
	}
	if perr := (*toyacc.ProtocolError)(nil); errors.As(err, &perr) {
		return toolcert.Turn(perr.Kind, perr.Message)
	}
	return err
}

func (a adapter) Finish(end toolcert.End, out *toolcert.Emit) error {
	for _, c := range a.acc.Finish() {
		if c.Status == "ok" {
			out.Outcome(toolcert.Dispatchable(c.ID, c.Name, c.Args))
		} else {
			out.Outcome(toolcert.Failed(c.Status, c.ID, c.Name, c.Raw()))
		}
	}
	return nil
}

func main() {
	buggy := slices.Contains(os.Args[1:], "--buggy")
	toolcert.Main(toolcert.Server{
		Implementation: toolcert.Implementation{Name: "toyacc (Go)"},
		Events: func([]toolcert.Tool, toolcert.Config) (toolcert.Accumulator[toolcert.Event], error) {
			return adapter{toyacc.New(toolcert.ParseString, buggy)}, nil
		},
	})
}
