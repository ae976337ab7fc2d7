// Package toolcert is the adapter side of toolcert's subprocess protocol (docs/PROTOCOL.md),
// for accumulators written in Go.
//
// toolcert (https://github.com/toolcert/toolcert) certifies streaming tool-call
// accumulators: it generates streams, feeds them to a subject and judges what the subject
// reports by docs/SPEC.md. A subject in Go is a program started by the harness that speaks
// the protocol on stdin and stdout; in the data flow this package sits between the harness
// and your accumulator:
//
//	toolcert certify ──run {seq, case}──► Server.Serve ──units──► your Accumulator (one per stream)
//	                 ◄──{seq, results}─── (Emit: outcomes, text, turn errors, stamped)
//
// What it holds:
//
//   - Server, Main: the protocol loop (start, configure, run, stop) around one Factory per
//     level (Event, WireEvent, []byte);
//   - Emit, Turn, Malformed, Skip and the outcomes Dispatchable, SchemaError, Failed: what
//     an accumulator reports;
//   - Parse and Marshal: strict JSON that keeps every number as written (json.Number);
//     SchemaErrors: the schema profile's check;
//   - SSEDecoder: the bytes level's chunks to SSE events, strictly (CR, LF, CRLF; UTF-8
//     checked across chunk cuts);
//   - NewCore, NewDecoder, WireFromEvents, BytesFromWire, ReferenceServer: the reference
//     accumulator and dialect decoders, and the lifts of an events-level accumulator to the
//     wire and bytes levels;
//   - Run, and Certify for `go test`: run the toolcert binary against an adapter and report
//     each finding, with its reproducer and replay line.
package toolcert
