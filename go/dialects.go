package toolcert

// Dialect decoders: one provider's SSE events to provider-neutral events, with no
// accumulating (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses), as the
// Python and Node packages' reference decoders read them (docs/SPEC.md section 3, "Server
// profiles"). WireFromEvents uses them to feed an events-level accumulator at the wire level.
// Unreadable input is a malformed turn error naming the event and field.

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Decoder turns one SSE event of its dialect into neutral events; one is made per stream.
type Decoder interface {
	Decode(ev WireEvent) ([]Event, error)
}

// NewDecoder is the reference decoder of dialect (anthropic, openai-chat, openai-responses).
// The server profile's quirks are not read: a client cannot know its server, and one rule per
// dialect reads every profile.
func NewDecoder(dialect string) (Decoder, error) {
	switch dialect {
	case "anthropic":
		return &anthropicDecoder{kinds: map[uint32]string{}}, nil
	case "openai-chat":
		return &chatDecoder{ids: map[string]uint32{}, held: map[uint32]uint32{}, unnamed: map[uint32]*unnamedCall{}}, nil
	case "openai-responses":
		return &responsesDecoder{calls: map[uint32]*string{}, bytes: map[uint32]bool{}}, nil
	}
	return nil, Skip("no reference decoder for the dialect " + strconv.Quote(dialect))
}

// object is a JSON object with each member's exact text (a key written twice: its last).
type object map[string]json.RawMessage

func payload(event, data string) (object, error) {
	if _, err := ParseString(data); err != nil {
		return nil, Malformed("%s: data is not JSON: %v", event, err)
	}
	var o object
	if err := json.Unmarshal([]byte(data), &o); err != nil || o == nil {
		return nil, Malformed("%s: data is not a JSON object", event)
	}
	return o, nil
}

func absent(raw json.RawMessage) bool { return raw == nil || string(raw) == "null" }

func (o object) str(key, where string, required bool) (string, bool, error) {
	raw, ok := o[key]
	if !ok || absent(raw) {
		if required {
			return "", false, Malformed("%s: missing field `%s`", where, key)
		}
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, Malformed("%s: %s: expected a string", where, key)
	}
	return s, true, nil
}

func (o object) u32(key, where string, required bool) (uint32, bool, error) {
	raw, ok := o[key]
	if !ok || absent(raw) {
		if required {
			return 0, false, Malformed("%s: %s: expected an unsigned 32-bit integer", where, key)
		}
		return 0, false, nil
	}
	// An integer literal only: 1.0 and 1e0 are not indices.
	n, err := strconv.ParseUint(string(raw), 10, 32)
	if err != nil {
		return 0, false, Malformed("%s: %s: expected an unsigned 32-bit integer", where, key)
	}
	return uint32(n), true, nil
}

func (o object) obj(key, where string, required bool) (object, bool, error) {
	raw, ok := o[key]
	if !ok || absent(raw) {
		if required {
			return nil, false, Malformed("%s: %s: expected an object", where, key)
		}
		return nil, false, nil
	}
	var sub object
	if raw[0] != '{' || json.Unmarshal(raw, &sub) != nil {
		return nil, false, Malformed("%s: %s: expected an object", where, key)
	}
	return sub, true, nil
}

// kind is the `type` member when it is a string, "" otherwise.
func (o object) kind() string {
	var s string
	if raw, ok := o["type"]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// nameOf: the SSE event's name, else its data's `type`.
func nameOf(ev WireEvent) (string, object, error) {
	if ev.Event != nil && *ev.Event != "" {
		return *ev.Event, nil, nil
	}
	data, err := payload("event without a name", ev.Data)
	if err != nil {
		return "", nil, err
	}
	name, _, err := data.str("type", "event without a name", true)
	return name, data, err
}

func checkType(name string, data object) error {
	kind, ok, err := data.str("type", name, false)
	if err != nil {
		return err
	}
	if ok && kind != name {
		return Malformed("%s: type: the data says `%s` under event `%s`", name, kind, name)
	}
	return nil
}

// toolInput: a tool_use input's argument text, "" (none) for no input, `null` or an empty
// object.
func toolInput(raw json.RawMessage) string {
	if absent(raw) {
		return ""
	}
	s := string(raw)
	if strings.HasPrefix(s, "{") && strings.Trim(s[1:], " \t\r\n") == "}" {
		return ""
	}
	return s
}

var anthropicStops = map[string]bool{"tool_use": true, "end_turn": true, "stop_sequence": true, "max_tokens": true, "refusal": true}

type anthropicDecoder struct {
	kinds   map[uint32]string // the kind of block each index last started
	started bool              // message_start came: another is a second generation spliced in
}

func (d *anthropicDecoder) Decode(ev WireEvent) ([]Event, error) {
	name, data, err := nameOf(ev)
	if err != nil {
		return nil, err
	}
	switch name {
	case "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
		"error", "ping", "message_start", "message_stop":
	default:
		return nil, nil // event types added after this decoder was written
	}
	if data == nil {
		if data, err = payload(name, ev.Data); err != nil {
			return nil, err
		}
	}
	if err := checkType(name, data); err != nil {
		return nil, err
	}
	var out []Event
	switch name {
	case "content_block_start":
		index, _, err := data.u32("index", name, true)
		if err != nil {
			return nil, err
		}
		block, _, err := data.obj("content_block", name, true)
		if err != nil {
			return nil, err
		}
		kind, _, err := block.str("type", name+": content_block", true)
		if err != nil {
			return nil, err
		}
		switch kind {
		case "tool_use":
			whole, err := d.toolUse(name, index, block, &out)
			if err != nil {
				return nil, err
			}
			// A call whose start carried its whole input: no delta may add to it.
			d.kinds[index] = "tool_use"
			if whole {
				d.kinds[index] = "tool_use_whole"
			}
		case "text":
			text, _, err := block.str("text", name+": content_block", false)
			if err != nil {
				return nil, err
			}
			if text != "" {
				out = append(out, Event{Type: "text_delta", Text: text})
			}
			d.kinds[index] = "text"
		default:
			d.kinds[index] = "other"
		}
	case "content_block_delta":
		index, _, err := data.u32("index", name, true)
		if err != nil {
			return nil, err
		}
		delta, _, err := data.obj("delta", name, true)
		if err != nil {
			return nil, err
		}
		kind, _, err := delta.str("type", name+": delta", true)
		if err != nil {
			return nil, err
		}
		switch {
		case kind == "text_delta":
			text, _, err := delta.str("text", name+": delta", true)
			if err != nil {
				return nil, err
			}
			out = append(out, Event{Type: "text_delta", Text: text})
		case kind == "input_json_delta" && d.kinds[index] != "other":
			// (a server tool's input is no client call: it is skipped)
			fragment, _, err := delta.str("partial_json", name+": delta", true)
			if err != nil {
				return nil, err
			}
			if d.kinds[index] == "tool_use_whole" {
				if fragment != "" {
					return nil, Malformed("%s: index %d: an input_json_delta for a tool_use whose content_block_start carried its whole input", name, index)
				}
			} else {
				out = append(out, Event{Type: "args_delta", Index: index, Fragment: fragment})
			}
		}
	case "content_block_stop":
		index, _, err := data.u32("index", name, true)
		if err != nil {
			return nil, err
		}
		if d.kinds[index] == "tool_use_whole" {
			d.kinds[index] = "tool_use" // stopped: later deltas are the core's to judge
		}
		if k, seen := d.kinds[index]; !seen || k == "tool_use" {
			out = append(out, Event{Type: "call_stop", Index: index})
		}
	case "message_start":
		if d.started {
			return nil, Malformed("%s: a second message in one stream (another generation spliced in)", name)
		}
		d.started = true
		if err := d.messageStart(name, data, &out); err != nil {
			return nil, err
		}
	case "message_delta":
		delta, _, err := data.obj("delta", name, true)
		if err != nil {
			return nil, err
		}
		reason, ok, err := delta.str("stop_reason", name+": delta", false)
		if err != nil {
			return nil, err
		}
		if ok {
			if !anthropicStops[reason] {
				return nil, Malformed("%s: delta.stop_reason: `%s` is not a known stop reason", name, reason)
			}
			out = append(out, Event{Type: "stop", Reason: reason})
		}
	case "error":
		e, _, err := data.obj("error", name, true)
		if err != nil {
			return nil, err
		}
		message, _, err := e.str("message", name+": error", true)
		if err != nil {
			return nil, err
		}
		out = append(out, Event{Type: "error", Message: message})
	case "ping":
		out = append(out, Event{Type: "ping"})
	}
	return out, nil
}

// toolUse announces a tool_use block and, when its input carries the arguments (any JSON but
// an empty object or null), that input's exact text as its one fragment. Whether it did.
func (d *anthropicDecoder) toolUse(name string, index uint32, block object, out *[]Event) (bool, error) {
	id, okID, err := block.str("id", name+": content_block", false)
	if err != nil {
		return false, err
	}
	callName, okName, err := block.str("name", name+": content_block", false)
	if err != nil {
		return false, err
	}
	if !okID || !okName {
		return false, Malformed("%s: content_block: a tool_use block needs `id` and `name`", name)
	}
	*out = append(*out, Event{Type: "call_start", Index: index, CallID: id, Name: callName})
	arguments := toolInput(block["input"])
	if arguments != "" {
		*out = append(*out, Event{Type: "args_delta", Index: index, Fragment: arguments})
	}
	return arguments != "", nil
}

// messageStart: complete blocks in message_start (programmatic tool calling), at content
// indices 0, 1, ...: a tool_use is a whole call, a text block its text, others skipped.
func (d *anthropicDecoder) messageStart(name string, data object, out *[]Event) error {
	var message object
	if raw, ok := data["message"]; !ok || json.Unmarshal(raw, &message) != nil || message == nil {
		return nil
	}
	raw, ok := message["content"]
	if !ok || absent(raw) {
		return nil
	}
	var content []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &content) != nil {
		return Malformed("%s: message.content: expected an array", name)
	}
	for i, item := range content {
		index := uint32(i)
		var block object
		if item[0] == '{' {
			_ = json.Unmarshal(item, &block)
		}
		switch block.kind() {
		case "tool_use":
			if _, err := d.toolUse(name, index, block, out); err != nil {
				return err
			}
			*out = append(*out, Event{Type: "call_stop", Index: index})
			d.kinds[index] = "tool_use"
		case "text":
			text, _, err := block.str("text", name+": content_block", false)
			if err != nil {
				return err
			}
			if text != "" {
				*out = append(*out, Event{Type: "text_delta", Text: text})
			}
			d.kinds[index] = "text"
		default:
			d.kinds[index] = "other"
		}
	}
	return nil
}

var chatFinish = map[string]bool{"tool_calls": true, "stop": true, "length": true, "content_filter": true}

const chatChunk = "chat.completion.chunk"

// noCall: the neutral index of a fragment that continues no call, never a call's ordinal.
const noCall = 0xFFFFFFFF

// chatDecoder reads every server profile of OpenAI Chat by one rule (docs/SPEC.md section
// 3): calls are told apart by id where an entry has one and by index otherwise. A new
// non-empty id starts a call (at an occupied index too), announced when its name comes (some
// hosts send it in a later entry; none by the finish is malformed); a known id
// continues its call; an entry without an id continues the call its index holds, or with no
// index the latest call. Repeated ids and names are never concatenated; an entry with no
// argument bytes beside or after the finish reason adds nothing, and a second finish reason
// is no second stop. A call's neutral index is its announcement ordinal.
type chatDecoder struct {
	ids      map[string]uint32 // each call's id, with its ordinal
	held     map[uint32]uint32 // which call each wire index holds (the latest there)
	calls    uint32
	finished bool
	unnamed  map[uint32]*unnamedCall // calls whose name has not come yet, by ordinal
}

// unnamedCall: a call announced without its name, with the argument bytes held for it.
type unnamedCall struct {
	id, held string
}

func (d *chatDecoder) Decode(ev WireEvent) ([]Event, error) {
	if ev.Data == "[DONE]" {
		return nil, nil
	}
	chunk, err := payload(chatChunk, ev.Data)
	if err != nil {
		return nil, err
	}
	var out []Event
	if raw, ok := chunk["error"]; ok && !absent(raw) {
		e, _, err := chunk.obj("error", chatChunk, true)
		if err != nil {
			return nil, err
		}
		message, _, err := e.str("message", chatChunk+": error", true)
		if err != nil {
			return nil, err
		}
		return []Event{{Type: "error", Message: message}}, nil
	}
	raw, ok := chunk["choices"]
	if !ok || absent(raw) {
		// A usage-only chunk, a prelude of content-filter results: bookkeeping.
		if u, ok := chunk["usage"]; ok && !absent(u) {
			return nil, nil
		}
		if p, ok := chunk["prompt_filter_results"]; ok && !absent(p) {
			return nil, nil
		}
		return nil, Malformed("%s: has neither `choices` nor `error`", chatChunk)
	}
	var choices []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &choices) != nil {
		return nil, Malformed("%s: choices: expected an array", chatChunk)
	}
	for _, c := range choices {
		var choice object
		if c[0] != '{' || json.Unmarshal(c, &choice) != nil {
			return nil, Malformed("%s: choices: expected objects", chatChunk)
		}
		n, _, err := choice.u32("index", chatChunk+": choices", false)
		if err != nil {
			return nil, err
		}
		if n != 0 {
			continue // other choices are other completions
		}
		said := false
		reason, finishing, err := choice.str("finish_reason", chatChunk+": choices[0]", false)
		if err != nil {
			return nil, err
		}
		delta, hasDelta, err := choice.obj("delta", chatChunk+": choices[0]", false)
		if err != nil {
			return nil, err
		}
		if hasDelta {
			text, ok, err := delta.str("content", chatChunk+": delta", false)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, Event{Type: "text_delta", Text: text})
				said = true
			}
			_, refusal, err := delta.str("refusal", chatChunk+": delta", false)
			if err != nil {
				return nil, err
			}
			said = said || refusal
			if raw, ok := delta["tool_calls"]; ok && !absent(raw) {
				var entries []json.RawMessage
				if raw[0] != '[' || json.Unmarshal(raw, &entries) != nil {
					return nil, Malformed("%s: delta.tool_calls: expected an array", chatChunk)
				}
				for k, e := range entries {
					var entry object
					if e[0] != '{' || json.Unmarshal(e, &entry) != nil {
						return nil, Malformed("%s: delta.tool_calls[%d]: expected an object", chatChunk, k)
					}
					if err := d.entry(k, entry, finishing, &out); err != nil {
						return nil, err
					}
					said = true
				}
			}
		}
		if finishing {
			if !chatFinish[reason] {
				return nil, Malformed("%s: finish_reason: `%s` is not a known finish reason", chatChunk, reason)
			}
			for _, u := range d.unnamed {
				return nil, Malformed("%s: finish_reason: the call %q never got its function.name", chatChunk, u.id)
			}
			if !d.finished { // some servers send a second finish chunk
				d.finished = true
				out = append(out, Event{Type: "stop", Reason: reason})
			}
		} else if !said {
			out = append(out, Event{Type: "ping"}) // a chunk that carries nothing is a keep-alive
		}
	}
	return out, nil
}

func (d *chatDecoder) entry(k int, entry object, finishing bool, out *[]Event) error {
	where := chatChunk + ": delta.tool_calls[" + strconv.Itoa(k) + "]"
	index, hasIndex, err := entry.u32("index", where, false) // some servers send none
	if err != nil {
		return err
	}
	id, _, err := entry.str("id", where, false) // an empty id is no id
	if err != nil {
		return err
	}
	function, _, err := entry.obj("function", where, false)
	if err != nil {
		return err
	}
	name, _, err := function.str("name", where+".function", false)
	if err != nil {
		return err
	}
	arguments, _, err := function.str("arguments", where+".function", false)
	if err != nil {
		return err
	}
	known := false
	var call uint32
	if id != "" {
		call, known = d.ids[id]
		if !known {
			ordinal := d.calls
			d.calls++
			d.ids[id] = ordinal
			if hasIndex {
				d.held[index] = ordinal
			}
			if name == "" {
				// The name comes in a later entry (some hosts): the call waits for it.
				d.unnamed[ordinal] = &unnamedCall{id: id, held: arguments}
				return nil
			}
			*out = append(*out, Event{Type: "call_start", Index: ordinal, CallID: id, Name: name})
			if arguments != "" {
				*out = append(*out, Event{Type: "args_delta", Index: ordinal, Fragment: arguments})
			}
			return nil
		}
	} else if hasIndex {
		call, known = d.held[index]
	} else if d.calls > 0 {
		call, known = d.calls-1, true
	}
	if u, waiting := d.unnamed[call]; known && waiting {
		if name == "" {
			u.held += arguments
			return nil
		}
		delete(d.unnamed, call)
		*out = append(*out, Event{Type: "call_start", Index: call, CallID: u.id, Name: name})
		if u.held != "" {
			*out = append(*out, Event{Type: "args_delta", Index: call, Fragment: u.held})
		}
	}
	if !known {
		*out = append(*out, Event{Type: "args_delta", Index: noCall, Fragment: arguments})
	} else if arguments != "" || !(finishing || d.finished) {
		*out = append(*out, Event{Type: "args_delta", Index: call, Fragment: arguments})
	}
	return nil
}

// responsesDecoder keys calls by output_index alone (an item_id, which some servers change on
// every event, is never read).
type responsesDecoder struct {
	// Per output index of a call: nil while its deltas stream, then the arguments its first
	// done repeated (to read its output_item.done: docs/SPEC.md, WIRE-DONE).
	calls map[uint32]*string
	// The indices argument bytes came for: a done with none before it carries the call's
	// arguments (LM Studio sends no delta).
	bytes map[uint32]bool
	// response.created came: another is a second generation spliced in.
	created bool
}

func (d *responsesDecoder) Decode(ev WireEvent) ([]Event, error) {
	name, data, err := nameOf(ev)
	if err != nil {
		return nil, err
	}
	switch name {
	case "response.output_item.added", "response.function_call_arguments.delta",
		"response.function_call_arguments.done", "response.output_text.delta",
		"response.failed", "error", "response.completed", "response.incomplete",
		"response.in_progress", "response.output_item.done":
	case "response.created":
		if d.created {
			return nil, Malformed("%s: a second response in one stream (another generation spliced in)", name)
		}
		d.created = true
		return nil, nil
	default:
		return nil, nil // content parts, reasoning, ...
	}
	if data == nil {
		if data, err = payload(name, ev.Data); err != nil {
			return nil, err
		}
	}
	if err := checkType(name, data); err != nil {
		return nil, err
	}
	var out []Event
	switch name {
	case "response.output_item.added", "response.output_item.done":
		index, _, err := data.u32("output_index", name, true)
		if err != nil {
			return nil, err
		}
		item, _, err := data.obj("item", name, true)
		if err != nil {
			return nil, err
		}
		// An item of another type (a hosted tool's, whatever its fields hold) is skipped.
		if item.kind() != "function_call" {
			return nil, nil
		}
		if name == "response.output_item.done" {
			return d.itemDone(name, index, item)
		}
		callID, okID, err := item.str("call_id", name+": item", false)
		if err != nil {
			return nil, err
		}
		callName, okName, err := item.str("name", name+": item", false)
		if err != nil {
			return nil, err
		}
		if !okID || !okName {
			return nil, Malformed("%s: item: a function_call item needs `call_id` and `name`", name)
		}
		out = append(out, Event{Type: "call_start", Index: index, CallID: callID, Name: callName})
		d.calls[index] = nil
		arguments, _, err := item.str("arguments", name+": item", false)
		if err != nil {
			return nil, err
		}
		if arguments != "" {
			out = append(out, Event{Type: "args_delta", Index: index, Fragment: arguments})
			d.bytes[index] = true
		}
	case "response.function_call_arguments.delta":
		index, _, err := data.u32("output_index", name, true)
		if err != nil {
			return nil, err
		}
		delta, _, err := data.str("delta", name, true)
		if err != nil {
			return nil, err
		}
		out = append(out, Event{Type: "args_delta", Index: index, Fragment: delta})
		d.bytes[index] = true
	case "response.function_call_arguments.done":
		index, _, err := data.u32("output_index", name, true)
		if err != nil {
			return nil, err
		}
		arguments, _, err := data.str("arguments", name, true)
		if err != nil {
			return nil, err
		}
		if _, announced := d.calls[index]; announced && !d.bytes[index] && arguments != "" {
			out = append(out, Event{Type: "args_delta", Index: index, Fragment: arguments})
		}
		a := arguments
		d.calls[index] = &a
		d.bytes[index] = true
		out = append(out, Event{Type: "call_stop", Index: index, Arguments: &a})
	case "response.output_text.delta":
		delta, _, err := data.str("delta", name, true)
		if err != nil {
			return nil, err
		}
		out = append(out, Event{Type: "text_delta", Text: delta})
	case "response.failed":
		response, _, err := data.obj("response", name, true)
		if err != nil {
			return nil, err
		}
		e, ok, err := response.obj("error", name+": response", false)
		if err != nil {
			return nil, err
		}
		message := "the response failed"
		if ok {
			if message, _, err = e.str("message", name+": response.error", true); err != nil {
				return nil, err
			}
		}
		out = append(out, Event{Type: "error", Message: message})
	case "error":
		message, _, err := data.str("message", name, true)
		if err != nil {
			return nil, err
		}
		out = append(out, Event{Type: "error", Message: message})
	case "response.completed":
		out = append(out, Event{Type: "stop", Reason: "completed"})
	case "response.incomplete":
		out = append(out, Event{Type: "stop", Reason: "incomplete"})
	default:
		out = append(out, Event{Type: "ping"}) // a status event with nothing new
	}
	return out, nil
}

func (d *responsesDecoder) itemDone(name string, index uint32, item object) ([]Event, error) {
	var out []Event
	arguments, hasArguments, err := item.str("arguments", name+": item", false)
	if err != nil {
		return nil, err
	}
	repeated, announced := d.calls[index]
	switch {
	case !announced:
		// The call's only event: announcement, whole arguments and terminal at once.
		callID, okID, err := item.str("call_id", name+": item", false)
		if err != nil {
			return nil, err
		}
		callName, okName, err := item.str("name", name+": item", false)
		if err != nil {
			return nil, err
		}
		if !okID || !okName || !hasArguments {
			return nil, Malformed("%s: item: a function_call item needs `call_id`, `name` and `arguments`", name)
		}
		out = append(out, Event{Type: "call_start", Index: index, CallID: callID, Name: callName})
		if arguments != "" {
			out = append(out, Event{Type: "args_delta", Index: index, Fragment: arguments})
		}
		out = append(out, Event{Type: "call_stop", Index: index})
		a := arguments
		d.calls[index] = &a
		d.bytes[index] = true
	case repeated != nil:
		// A second repeat of the arguments: it must say what the first said.
		if hasArguments && arguments != *repeated {
			return nil, Turn("done_mismatch", name+": item.arguments differ from function_call_arguments.done's")
		}
	default:
		// No function_call_arguments.done: this is the terminal, which carries the arguments
		// when no bytes came before it, else repeats them.
		if !d.bytes[index] && arguments != "" {
			out = append(out, Event{Type: "args_delta", Index: index, Fragment: arguments})
		}
		a := arguments
		d.calls[index] = &a
		d.bytes[index] = true
		stop := Event{Type: "call_stop", Index: index}
		if hasArguments {
			stop.Arguments = &a
		}
		out = append(out, stop)
	}
	return out, nil
}
