//! The bugs: one [`Hooks`] override each (the rest of the accumulator is [`Base`]'s), plus
//! the two factories that share one accumulator between streams.
//!
//! Each struct is named after its mutant and says, in its doc, what the code that shipped it
//! was thinking. [`crate::zoo`] pairs each with its seed passage and the invariants that
//! must catch it.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;
use toolcert_scenario::{StopReason, StreamEnd};
use toolcert_subject::{
    Accumulator, Emit, EndingKind, Event, Factory, FailReason, Outcome, ReportedEnding, Slot, StreamSpec,
    TurnError,
};

use crate::base::{Base, CallBuffer, Calls, Correct, Hooks, Schemas};

// ---- keying -------------------------------------------------------------------------------

/// `name-keyed`: buffers keyed by the tool's name. A second call to the same tool finds the
/// first one's entry (and reopens it), so both documents land in one buffer.
#[derive(Default)]
pub struct NameKeyed;

impl Hooks for NameKeyed {
    fn open(&self, buffers: &mut Vec<CallBuffer>, call_id: &str, name: &str) -> usize {
        match buffers.iter().position(|b| b.name == name) {
            Some(k) => {
                buffers[k].stopped = false;
                k
            }
            None => Correct.open(buffers, call_id, name),
        }
    }
}

/// `latest-call-id`: every outcome is reported under the id of the most recent announcement
/// (the id kept in one variable, overwritten by each `content_block_start`).
#[derive(Default)]
pub struct LatestCallId;

impl Hooks for LatestCallId {
    fn report(&self, calls: &Calls, _call: &CallBuffer, mut outcome: Outcome, out: &mut Emit) {
        let latest = calls.buffers.last().map(|b| b.call_id.clone()).unwrap_or_default();
        match &mut outcome {
            Outcome::Dispatchable { call_id, .. } | Outcome::SchemaError { call_id, .. } => *call_id = latest,
            Outcome::Failed { call_id, .. } => *call_id = Some(latest),
        }
        out.outcome(outcome);
    }
}

// ---- protocol faults given a plausible interpretation ------------------------------------

/// `buffer-on-first-fragment`: a `defaultdict`: a fragment for an unannounced index makes an
/// empty buffer (no id, no name) and is appended to it.
#[derive(Default)]
pub struct BufferOnFirstFragment;

impl Hooks for BufferOnFirstFragment {
    fn unannounced(&self, calls: &mut Calls, index: u32, fragment: &str) -> Result<(), TurnError> {
        let k = Correct.open(&mut calls.buffers, "", "");
        calls.index.insert(index, k);
        calls.buffers[k].args.push_str(fragment);
        Ok(())
    }
}

/// `unannounced-to-open-call`: a fragment for an unannounced index is appended to the most
/// recently announced call still open ("it must belong to the call in progress").
#[derive(Default)]
pub struct UnannouncedToOpenCall;

impl Hooks for UnannouncedToOpenCall {
    fn unannounced(&self, calls: &mut Calls, index: u32, fragment: &str) -> Result<(), TurnError> {
        match calls.buffers.iter_mut().rev().find(|b| !b.stopped) {
            Some(open) => {
                open.args.push_str(fragment);
                Ok(())
            }
            None => Correct.unannounced(calls, index, fragment),
        }
    }
}

/// `unknown-index-as-0`: an index the accumulator does not know is read as 0 (as
/// `delta.get("index", 0)` does when the key is missing), so the fragment joins call 0.
#[derive(Default)]
pub struct UnknownIndexAsZero;

impl Hooks for UnknownIndexAsZero {
    fn unannounced(&self, calls: &mut Calls, index: u32, fragment: &str) -> Result<(), TurnError> {
        match calls.index.get(&0) {
            Some(&k) => {
                calls.buffers[k].args.push_str(fragment);
                Ok(())
            }
            None => Correct.unannounced(calls, index, fragment),
        }
    }
}

/// `duplicate-ignored`: a replayed announcement is accepted silently (the buffer is kept).
#[derive(Default)]
pub struct DuplicateIgnored;

impl Hooks for DuplicateIgnored {
    fn duplicate(&self, _: &mut Calls, _: u32, _: &str, _: &str) -> Result<(), TurnError> {
        Ok(())
    }
}

/// `duplicate-resets`: a replayed announcement starts the call over with an empty buffer.
#[derive(Default)]
pub struct DuplicateResets;

impl Hooks for DuplicateResets {
    fn duplicate(&self, calls: &mut Calls, index: u32, call_id: &str, name: &str) -> Result<(), TurnError> {
        let k = calls.index[&index];
        calls.buffers[k] = CallBuffer::new(call_id, name);
        Ok(())
    }
}

/// `duplicate-phantom`: a replayed announcement adds a second, empty call with the same id
/// (the fragments keep going to the first).
#[derive(Default)]
pub struct DuplicatePhantom;

impl Hooks for DuplicatePhantom {
    fn duplicate(&self, calls: &mut Calls, _: u32, call_id: &str, name: &str) -> Result<(), TurnError> {
        calls.buffers.push(CallBuffer::new(call_id, name));
        Ok(())
    }
}

/// `duplicate-concatenates`: a replayed announcement is merged like a delta: its id and name
/// are appended to the call's (`"toolu_01Katoolu_01Ka"`), as a handler that `+=`s every field.
#[derive(Default)]
pub struct DuplicateConcatenates;

impl Hooks for DuplicateConcatenates {
    fn duplicate(&self, calls: &mut Calls, index: u32, call_id: &str, name: &str) -> Result<(), TurnError> {
        let call = &mut calls.buffers[calls.index[&index]];
        call.call_id.push_str(call_id);
        call.name.push_str(name);
        Ok(())
    }
}

/// `fragment-after-stop-accepted`: a fragment for a call after its terminal event is
/// appended to its buffer.
#[derive(Default)]
pub struct FragmentAfterStopAccepted;

impl Hooks for FragmentAfterStopAccepted {
    fn after_stop(&self, calls: &mut Calls, k: usize, fragment: &str) -> Result<(), TurnError> {
        calls.buffers[k].args.push_str(fragment);
        Ok(())
    }
}

/// `done-ignored`: the arguments a terminal event repeats (Responses' `done`) are never
/// compared with the fragments, so a stream that contradicts itself is accepted.
#[derive(Default)]
pub struct DoneIgnored;

impl Hooks for DoneIgnored {
    fn done(&self, _: &mut CallBuffer, _: &str) -> Result<(), TurnError> {
        Ok(())
    }
}

/// `done-trusted`: the arguments a terminal event repeats replace the fragments ("`done` has
/// the whole string, use that"), even when they say something else.
#[derive(Default)]
pub struct DoneTrusted;

impl Hooks for DoneTrusted {
    fn done(&self, call: &mut CallBuffer, arguments: &str) -> Result<(), TurnError> {
        call.args = arguments.into();
        Ok(())
    }
}

// ---- what is done to a fragment -----------------------------------------------------------

/// `fragment-trim`: each fragment is `.strip()`ped before it is appended ("whitespace in
/// JSON is insignificant"), which eats spaces inside string values.
#[derive(Default)]
pub struct FragmentTrim;

impl Hooks for FragmentTrim {
    fn append(&self, args: &mut String, fragment: &str, _: &mut Emit) {
        args.push_str(fragment.trim());
    }
}

/// `fragment-unescape`: each fragment's JSON escapes are decoded on their own before it is
/// appended, with undecodable ones ignored (Python's `unicode_escape`, `errors="ignore"`): an
/// escape split across two fragments is lost.
#[derive(Default)]
pub struct FragmentUnescape;

impl Hooks for FragmentUnescape {
    fn append(&self, args: &mut String, fragment: &str, _: &mut Emit) {
        args.push_str(&unescape_lossy(fragment));
    }
}

/// Decodes the JSON escapes of `s`, dropping any it cannot decode (a `\` or `\u00` cut at
/// the end, a lone surrogate).
fn unescape_lossy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('b') => out.push('\u{8}'),
            Some('f') => out.push('\u{c}'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let decoded = u32::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 4);
                out.extend(decoded.and_then(char::from_u32));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// `fragments-reversed`: each fragment is put in front of the buffer (a stack where a queue
/// was meant), so fragments join in reverse arrival order.
#[derive(Default)]
pub struct FragmentsReversed;

impl Hooks for FragmentsReversed {
    fn append(&self, args: &mut String, fragment: &str, _: &mut Emit) {
        args.insert_str(0, fragment);
    }
}

/// `args-in-text`: argument fragments are also appended to the message text.
#[derive(Default)]
pub struct ArgsInText;

impl Hooks for ArgsInText {
    fn append(&self, args: &mut String, fragment: &str, out: &mut Emit) {
        args.push_str(fragment);
        out.text(fragment);
    }
}

// ---- when a call is complete ----------------------------------------------------------------

/// `parses-is-complete`: the buffer is parsed after every fragment, and a successful parse is
/// taken as the call being finished: it is dispatched there and then.
#[derive(Default)]
pub struct ParsesIsComplete;

impl Hooks for ParsesIsComplete {
    fn dispatch_now(&self, call: &CallBuffer) -> bool {
        serde_json::from_str::<Value>(&call.args).is_ok()
    }
}

/// `balanced-braces`: the call is taken as finished as soon as its `{` and `}` balance.
#[derive(Default)]
pub struct BalancedBraces;

impl Hooks for BalancedBraces {
    fn dispatch_now(&self, call: &CallBuffer) -> bool {
        let opens = call.args.matches('{').count();
        opens > 0 && opens == call.args.matches('}').count()
    }
}

/// `dispatch-at-call-stop`: a call is judged and reported at its own terminal event
/// (`content_block_stop`), before the message stop reason that may say the turn was cut.
#[derive(Default)]
pub struct DispatchAtCallStop;

impl Hooks for DispatchAtCallStop {
    fn dispatch_now(&self, call: &CallBuffer) -> bool {
        call.stopped
    }
}

/// `finish-reason-not-terminal`: only a call's own terminal event finishes it, so in OpenAI
/// Chat (where `finish_reason` is every call's only terminal) every call ends abandoned.
#[derive(Default)]
pub struct FinishReasonNotTerminal;

impl Hooks for FinishReasonNotTerminal {
    fn finished(&self, _: &Calls, call: &CallBuffer) -> bool {
        call.stopped
    }
}

/// `live-judged-as-finished`: at the end of the stream every buffer is judged as if it had
/// finished, so a call cut off by a disconnect is parsed (and run, if the cut parses).
#[derive(Default)]
pub struct LiveJudgedAsFinished;

impl Hooks for LiveJudgedAsFinished {
    fn finished(&self, _: &Calls, _: &CallBuffer) -> bool {
        true
    }
}

// ---- finalising -----------------------------------------------------------------------------

/// `ignores-truncation`: the message stop reason is never consulted: a turn cut by
/// max_tokens / length is dispatched like a complete one.
#[derive(Default)]
pub struct IgnoresTruncation;

impl Hooks for IgnoresTruncation {
    fn truncating(&self, _: StopReason) -> bool {
        false
    }
}

/// `only-max-tokens`: the seeds' own `finalize` test, `stop_reason == "max_tokens"`: every
/// other truncating reason (Chat `length`, `content_filter`, `refusal`, Responses
/// `incomplete`) passes as complete.
#[derive(Default)]
pub struct OnlyMaxTokens;

impl Hooks for OnlyMaxTokens {
    fn truncating(&self, reason: StopReason) -> bool {
        reason == StopReason::MaxTokens
    }
}

/// `raw-decode`: the buffer is read with `raw_decode`: the first document wins and the bytes
/// after it are ignored.
#[derive(Default)]
pub struct RawDecode;

impl Hooks for RawDecode {
    fn parse(&self, args: &str) -> Option<Value> {
        // Past serde_json's default depth as the correct parse goes (the bug is the first
        // document winning, not a depth limit).
        let mut de = serde_json::Deserializer::from_str(args);
        de.disable_recursion_limit();
        de.into_iter::<Value>().next()?.ok()
    }
}

/// `repair-parse`: the buffer is read with a repair parser at dispatch: unterminated strings
/// and objects are closed, and a second document's members are merged into the first.
#[derive(Default)]
pub struct RepairParse;

impl Hooks for RepairParse {
    fn parse(&self, args: &str) -> Option<Value> {
        toolcert_oracle::parse_document(&repair(args))
    }
}

/// What a repair parser makes of `s`: raw control characters in strings escaped, a
/// second top-level object merged into the first (`}{` becomes `,`), a dangling escape
/// dropped, an unterminated string closed, a trailing comma dropped, open brackets closed.
/// A valid document comes back unchanged.
fn repair(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    let mut closers: Vec<char> = Vec::new();
    let (mut in_string, mut escaped) = (false, false);
    for c in s.chars() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                c if c < ' ' => {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                    continue;
                }
                _ => {}
            }
            out.push(c);
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' if closers.is_empty() && !out.trim().is_empty() => {
                // A second document: reopen the first and carry on with its members.
                if let Some(end) = out.rfind('}') {
                    out.truncate(end);
                    out.push(',');
                    closers.push('}');
                    continue;
                }
                closers.push('}');
            }
            '{' => closers.push('}'),
            '[' => closers.push(']'),
            '}' | ']' => {
                closers.pop();
            }
            _ => {}
        }
        out.push(c);
    }
    if escaped {
        out.pop();
    }
    if in_string {
        out.push('"');
    }
    if !closers.is_empty() {
        let kept = out.trim_end().trim_end_matches(',').len();
        out.truncate(kept);
    }
    out.extend(closers.into_iter().rev());
    out
}

/// `empty-args-unparseable`: a call that sent no argument bytes is parsed as the empty
/// string, fails, and is reported unparseable instead of taking `{}`.
#[derive(Default)]
pub struct EmptyArgsUnparseable;

impl Hooks for EmptyArgsUnparseable {
    fn no_arguments(&self) -> Option<Value> {
        serde_json::from_str("").ok()
    }
}

/// `schema-unchecked`: parsed arguments are dispatched without checking the tool's schema.
#[derive(Default)]
pub struct SchemaUnchecked;

impl Hooks for SchemaUnchecked {
    fn validate(&self, _: &Schemas, _: &str, _: &Value) -> Vec<String> {
        Vec::new()
    }
}

// ---- reporting ------------------------------------------------------------------------------

/// `drops-live-calls`: `finalize` walks only the completed calls: a call still live when the
/// stream ends vanishes without an outcome.
#[derive(Default)]
pub struct DropsLiveCalls;

impl Hooks for DropsLiveCalls {
    fn report(&self, _: &Calls, _: &CallBuffer, outcome: Outcome, out: &mut Emit) {
        if !matches!(outcome, Outcome::Failed { reason: FailReason::Abandoned, .. }) {
            out.outcome(outcome);
        }
    }
}

/// `empty-args-dropped`: calls are reported only `if buf.args:`, so a call with no argument
/// bytes (a tool without parameters) is never reported.
#[derive(Default)]
pub struct EmptyArgsDropped;

impl Hooks for EmptyArgsDropped {
    fn report(&self, _: &Calls, call: &CallBuffer, outcome: Outcome, out: &mut Emit) {
        if !call.args.is_empty() {
            out.outcome(outcome);
        }
    }
}

/// `outcomes-twice`: every outcome is reported twice (once to the UI, once to the
/// dispatcher, through the same sink).
#[derive(Default)]
pub struct OutcomesTwice;

impl Hooks for OutcomesTwice {
    fn report(&self, _: &Calls, _: &CallBuffer, outcome: Outcome, out: &mut Emit) {
        out.outcome(outcome.clone());
        out.outcome(outcome);
    }
}

/// `failure-raw-dropped`: a failure is reported without the buffer (`raw` left empty), so the
/// log line cannot show what arrived.
#[derive(Default)]
pub struct FailureRawDropped;

impl Hooks for FailureRawDropped {
    fn report(&self, _: &Calls, _: &CallBuffer, mut outcome: Outcome, out: &mut Emit) {
        if let Outcome::Failed { raw, .. } = &mut outcome {
            raw.clear();
        }
        out.outcome(outcome);
    }
}

// ---- the text surface -----------------------------------------------------------------------

/// `text-doubled`: each text delta is shown twice (appended to the bubble, then the bubble
/// re-rendered with the delta).
#[derive(Default)]
pub struct TextDoubled;

impl Hooks for TextDoubled {
    fn text(&self, text: &str, out: &mut Emit) {
        out.text(text);
        out.text(text);
    }
}

/// `text-dropped`: text deltas are not shown (only tool calls are handled).
#[derive(Default)]
pub struct TextDropped;

impl Hooks for TextDropped {
    fn text(&self, _: &str, _: &mut Emit) {}
}

/// `prose-ahead-of-calls`: the message is assembled as all prose first, then all calls, so
/// prose written after a call moves before it.
#[derive(Default)]
pub struct ProseAheadOfCalls;

impl Hooks for ProseAheadOfCalls {
    fn layout(&self, slots: Vec<Slot>) -> Vec<Slot> {
        let (mut prose, calls): (Vec<Slot>, Vec<Slot>) =
            slots.into_iter().partition(|s| matches!(s, Slot::Text { .. }));
        prose.extend(calls);
        prose
    }
}

// ---- accumulators shared between streams ----------------------------------------------------

/// One accumulator for every stream of a case (module scope, or a long-lived client
/// object): `clear_at_end` says whether it is wiped when a stream ends.
pub struct OneForAll {
    acc: Rc<RefCell<Base<Correct>>>,
    clear_at_end: bool,
}

impl OneForAll {
    /// `shared-across-streams`: one accumulator, wiped at the end of each stream: successive
    /// turns work, concurrent streams collide.
    pub fn cleared_per_stream() -> Box<dyn Factory> {
        Box::new(OneForAll { acc: Rc::default(), clear_at_end: true })
    }

    /// `not-reset-between-turns`: one accumulator for the whole agent loop, never reset: the
    /// next turn finds the last one's calls.
    pub fn never_reset() -> Box<dyn Factory> {
        Box::new(OneForAll { acc: Rc::default(), clear_at_end: false })
    }
}

impl Factory for OneForAll {
    fn make(&self, spec: &StreamSpec<'_>) -> Option<Box<dyn Accumulator>> {
        self.acc.borrow_mut().set_tools(spec.tools);
        Some(Box::new(Handle { acc: self.acc.clone(), clear_at_end: self.clear_at_end }))
    }
}

/// One stream's handle on the shared accumulator.
struct Handle {
    acc: Rc<RefCell<Base<Correct>>>,
    clear_at_end: bool,
}

impl Accumulator for Handle {
    fn on_event(&mut self, event: &Event<'_>, out: &mut Emit) -> Result<(), TurnError> {
        self.acc.borrow_mut().on_event(event, out)
    }

    fn finish(&mut self, end: StreamEnd, out: &mut Emit) -> Result<(), TurnError> {
        let mut acc = self.acc.borrow_mut();
        let done = acc.finish(end, out);
        if self.clear_at_end {
            acc.clear();
        }
        done
    }
}

// ---- the widened space: each bug shows only on its class of input ------------------------

/// `buffer-capped-4k`: a fixed 4 KiB argument buffer; what does not fit is dropped.
#[derive(Default)]
pub struct BufferCapped;

impl Hooks for BufferCapped {
    fn append(&self, args: &mut String, fragment: &str, _out: &mut Emit) {
        const CAP: usize = 4096;
        let room = CAP.saturating_sub(args.len());
        let mut take = fragment.len().min(room);
        while !fragment.is_char_boundary(take) {
            take -= 1;
        }
        args.push_str(&fragment[..take]);
    }
}

/// `tool-names-case-folded`: tool names lower-cased when a call is announced, as a
/// registry keyed case-insensitively gives them back.
#[derive(Default)]
pub struct NamesCaseFolded;

impl Hooks for NamesCaseFolded {
    fn open(&self, buffers: &mut Vec<CallBuffer>, call_id: &str, name: &str) -> usize {
        buffers.push(CallBuffer::new(call_id, &name.to_lowercase()));
        buffers.len() - 1
    }
}

/// `args-nfc-normalised`: the buffer is Unicode-normalised (NFC) before it is parsed, as a
/// "clean up the text" step does: decomposed characters, the Angstrom sign and Hangul jamo
/// change.
#[derive(Default)]
pub struct NfcNormalised;

impl Hooks for NfcNormalised {
    fn parse(&self, args: &str) -> Option<Value> {
        use unicode_normalization::UnicodeNormalization;
        toolcert_oracle::parse_document(&args.nfc().collect::<String>())
    }
}

/// `numbers-through-double`: every number goes through a double (as `JSON.parse` does):
/// integers past 2^53 and long decimals change. Integers a double holds exactly stay
/// integers.
#[derive(Default)]
pub struct NumbersThroughDouble;

impl Hooks for NumbersThroughDouble {
    fn parse(&self, args: &str) -> Option<Value> {
        fn via_double(v: &mut Value) {
            match v {
                Value::Number(n) => {
                    if let Some(f) = n.as_f64() {
                        *v = if f.fract() == 0.0 && f.abs() < 9.2e18 {
                            Value::from(f as i64)
                        } else {
                            serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
                        };
                    }
                }
                Value::Array(a) => a.iter_mut().for_each(via_double),
                Value::Object(o) => o.values_mut().for_each(via_double),
                _ => {}
            }
        }
        let mut v = toolcert_oracle::parse_document(args)?;
        via_double(&mut v);
        Some(v)
    }
}

/// `lenient-numbers`: a buffer that does not parse is retried with its numbers read the
/// way a lenient (JSON5-style) reader does: `NaN` and `Infinity` as null, `01`, `+1`, `.5`,
/// `1.` and `0x1F` as the numbers they look like.
#[derive(Default)]
pub struct LenientNumbers;

impl Hooks for LenientNumbers {
    fn parse(&self, args: &str) -> Option<Value> {
        toolcert_oracle::parse_document(args).or_else(|| toolcert_oracle::parse_document(&lenient(args)))
    }
}

/// The document with every number-like token outside strings rewritten as JSON.
pub(crate) fn lenient(doc: &str) -> String {
    let b = doc.as_bytes();
    let mut out = String::with_capacity(doc.len());
    let (mut i, mut in_string, mut escaped) = (0, false, false);
    while i < b.len() {
        let c = b[i];
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if c == b'"' {
            in_string = true;
        } else if c.is_ascii_digit() || matches!(c, b'+' | b'-' | b'.' | b'N' | b'I') {
            let end = b[i..]
                .iter()
                .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')))
                .map_or(b.len(), |n| i + n);
            let t = &doc[i..end];
            let hex = t.strip_prefix("0x").and_then(|h| i64::from_str_radix(h, 16).ok());
            match (hex, t.parse::<f64>()) {
                (Some(h), _) => out.push_str(&h.to_string()),
                (None, Ok(f)) if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 => {
                    out.push_str(&(f as i64).to_string())
                }
                (None, Ok(f)) if f.is_finite() => {
                    out.push_str(&serde_json::Number::from_f64(f).map_or("null".into(), |n| n.to_string()))
                }
                (None, Ok(_)) => out.push_str("null"),
                (None, Err(_)) => out.push_str(t),
            }
            i = end;
            continue;
        }
        out.push(c as char);
        if c >= 0x80 {
            // Copy the rest of a multi-byte character as it is.
            out.pop();
            let len = doc[i..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&doc[i..i + len]);
            i += len;
            continue;
        }
        i += 1;
    }
    out
}

/// `whitespace-as-empty`: a buffer of only whitespace is taken for "no arguments" (`{}`),
/// as `if not buf.strip():` does.
#[derive(Default)]
pub struct WhitespaceAsEmpty;

impl Hooks for WhitespaceAsEmpty {
    fn parse(&self, args: &str) -> Option<Value> {
        if args.trim().is_empty() {
            return Some(Value::Object(Default::default()));
        }
        toolcert_oracle::parse_document(args)
    }
}

/// `first-key-wins`: of a key written twice the first value is kept (what a streaming
/// parser that ignores later keys does); JSON parsers keep the last.
#[derive(Default)]
pub struct FirstKeyWins;

impl Hooks for FirstKeyWins {
    fn parse(&self, args: &str) -> Option<Value> {
        toolcert_oracle::parse_document(args)?;
        let mut de = serde_json::Deserializer::from_str(args);
        de.disable_recursion_limit();
        let v = serde::Deserialize::deserialize(&mut de).map(|FirstWins(v)| v).ok()?;
        de.end().ok()?;
        Some(v)
    }
}

struct FirstWins(Value);

impl<'de> serde::Deserialize<'de> for FirstWins {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(FirstWinsVisitor).map(FirstWins)
    }
}

struct FirstWinsVisitor;

impl<'de> serde::de::Visitor<'de> for FirstWinsVisitor {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut v = Vec::new();
        while let Some(FirstWins(e)) = seq.next_element()? {
            v.push(e);
        }
        Ok(Value::Array(v))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut o = serde_json::Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let FirstWins(v) = map.next_value()?;
            // serde_json's arbitrary-precision numbers arrive as a one-entry map.
            if k == "$serde_json::private::Number" {
                if let Some(n) = v.as_str().and_then(|s| serde_json::from_str::<Value>(s).ok()) {
                    return Ok(n);
                }
            }
            o.entry(k).or_insert(v);
        }
        Ok(Value::Object(o))
    }
}

/// `depth-limit-128`: the buffer is parsed with serde_json's default recursion limit: a
/// valid document nested past 127 levels is refused.
#[derive(Default)]
pub struct DepthLimited;

impl Hooks for DepthLimited {
    fn parse(&self, args: &str) -> Option<Value> {
        serde_json::from_str(args).ok()
    }
}

/// `objects-only`: a document that is not an object is refused as unparseable, as
/// `if not isinstance(args, dict): fail` does; the model wrote valid JSON.
#[derive(Default)]
pub struct ObjectsOnly;

impl Hooks for ObjectsOnly {
    fn parse(&self, args: &str) -> Option<Value> {
        toolcert_oracle::parse_document(args).filter(Value::is_object)
    }
}

/// `lone-surrogate-replaced`: a buffer that does not parse is retried with lone surrogate
/// escapes replaced by U+FFFD, as lenient decoders (and Python's `json`, which keeps them)
/// let them through.
#[derive(Default)]
pub struct LoneSurrogateReplaced;

impl Hooks for LoneSurrogateReplaced {
    fn parse(&self, args: &str) -> Option<Value> {
        toolcert_oracle::parse_document(args).or_else(|| toolcert_oracle::parse_document(&replace_lone(args)))
    }
}

/// `\uD800`-`\uDFFF` escapes that are not a high one followed by a low one, as `\ufffd`.
pub(crate) fn replace_lone(doc: &str) -> String {
    let b = doc.as_bytes();
    let unit = |at: usize| -> Option<u32> {
        (b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'u'))
            .then(|| doc.get(at + 2..at + 6))
            .flatten()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
    };
    let mut out = String::with_capacity(doc.len());
    let mut i = 0;
    while i < doc.len() {
        match unit(i) {
            Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => {
                out.push_str(&doc[i..i + 12]);
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.push_str("\\ufffd");
                i += 6;
            }
            _ => {
                let len = doc[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&doc[i..i + len]);
                i += len;
            }
        }
    }
    out
}

/// `index-as-position`: a fragment's index is taken as the position of its call among the
/// announced ones, as `calls[index]` on a list does: right only while indices are dense
/// from 0 and count calls alone.
#[derive(Default)]
pub struct IndexAsPosition;

impl Hooks for IndexAsPosition {
    fn lookup(&self, calls: &Calls, index: u32) -> Option<usize> {
        ((index as usize) < calls.buffers.len()).then_some(index as usize)
    }
}

/// `complete-on-abandon`: a stream that ends without its stop reason is reported as a
/// finished answer, as a client does that treats the end of the byte stream as the end of
/// the message.
#[derive(Default)]
pub struct CompleteOnAbandon;

impl Hooks for CompleteOnAbandon {
    fn ending(&self, calls: &Calls, end: StreamEnd) -> ReportedEnding {
        match calls.stop {
            Some(_) => Correct.ending(calls, end),
            None => ReportedEnding::new(EndingKind::Complete, None),
        }
    }
}

/// `fills-in-stop`: an OpenAI-compatible client that fills in `finish_reason: "stop"` for a
/// stream that simply stopped (or errored): the ending's kind is right, the reason made up.
#[derive(Default)]
pub struct FillsInStop;

impl Hooks for FillsInStop {
    fn ending(&self, calls: &Calls, end: StreamEnd) -> ReportedEnding {
        let mut said = Correct.ending(calls, end);
        said.stop_reason.get_or_insert_with(|| "stop".into());
        said
    }
}

/// `text-held-for-the-message`: text is held until the stream shows something else (a call,
/// a stop, a ping) and shown then; at the end it is released only when the turn made calls
/// or stopped. A text-only answer whose stream was cut, or broke off with an error, shows
/// nothing of what arrived.
#[derive(Default)]
pub struct TextHeldForTheMessage {
    held: RefCell<String>,
}

impl Hooks for TextHeldForTheMessage {
    fn text(&self, text: &str, _out: &mut Emit) {
        self.held.borrow_mut().push_str(text);
    }

    fn observe(&self, event: &Event<'_>, out: &mut Emit) {
        if !matches!(event, Event::TextDelta { .. } | Event::Error { .. }) {
            out.text(&std::mem::take(&mut *self.held.borrow_mut()));
        }
    }

    fn at_end(&self, calls: &Calls, out: &mut Emit) {
        let held = std::mem::take(&mut *self.held.borrow_mut());
        if !calls.buffers.is_empty() || calls.stop.is_some() {
            out.text(&held);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenient_numbers_and_lone_surrogates_are_repaired() {
        assert_eq!(
            lenient(r#"{"a": 01, "b": +1, "c": .5, "d": NaN, "s": "01 é"}"#),
            r#"{"a": 1, "b": 1, "c": 0.5, "d": null, "s": "01 é"}"#
        );
        assert_eq!(lenient(r#"{"h": 0x1F}"#), r#"{"h": 31}"#);
        assert_eq!(replace_lone(r#""\ud800 \ud83d\ude00 \udc00""#), r#""\ufffd \ud83d\ude00 \ufffd""#);
    }

    #[test]
    fn first_key_wins_keeps_the_first() {
        let v = FirstKeyWins.parse(r#"{"a": 1, "b": [{"c": 2, "c": 3}], "a": 2}"#).unwrap();
        assert_eq!(v, serde_json::json!({"a": 1, "b": [{"c": 2}]}));
    }

    #[test]
    fn unescape_loses_a_split_escape() {
        assert_eq!(unescape_lossy(r#"line one\"#), "line one");
        assert_eq!(unescape_lossy(r#"M\u00"#), "M");
        assert_eq!(unescape_lossy(r#"M\u00e9rida \"x\" a\nb"#), "Mérida \"x\" a\nb");
    }

    #[test]
    fn repair_closes_and_merges() {
        let valid = r#"{"a": [1, {"b": "}{"}], "c": "x\"y"}"#;
        assert_eq!(repair(valid), valid);
        assert_eq!(repair(r#"{"a": "cut \"#), r#"{"a": "cut "}"#);
        assert_eq!(repair(r#"{"a": [1, 2,"#), r#"{"a": [1, 2]}"#);
        assert_eq!(repair("{\"a\": \"x\ny"), "{\"a\": \"x\\u000ay\"}");
        let merged: Value =
            serde_json::from_str(&repair(r#"{"s": "refunded", "n": 1}{"s": "open", "n": 1}"#))
                .expect("the merge parses");
        assert_eq!(merged, serde_json::json!({"s": "open", "n": 1}));
    }
}

// ---- foreign blocks (ACC-FOREIGN) ----------------------------------------------------------

/// Opens a buffer for a foreign block of `kind` as if it were the client's call: its start
/// announces it, its deltas are its fragments, its stop is its terminal. What a client does
/// that routes every `input_json_delta` (or every tool-ish item) to its call accumulator.
fn foreign_as_call(kind: toolcert_scenario::ForeignKind, calls: &mut Calls, event: &Event<'_>) {
    match event {
        Event::ForeignStart { index, kind: k, id, name, .. }
            if *k == kind && !calls.index.contains_key(index) =>
        {
            let k = Correct.open(&mut calls.buffers, id, name);
            calls.index.insert(*index, k);
            calls.layout.push(Slot::Call { call_id: id.to_string() });
        }
        Event::ForeignDelta { index, kind: k, fragment } if *k == kind => {
            if let Some(&b) = calls.index.get(index) {
                calls.buffers[b].args.push_str(fragment);
            }
        }
        Event::ForeignStop { index } => {
            if let Some(&b) = calls.index.get(index) {
                calls.buffers[b].stopped = true;
            }
        }
        _ => {}
    }
}

/// `server-tool-dispatched`: a `server_tool_use` block streams `input_json_delta`s exactly as
/// a client's `tool_use` does, and the client that keys on the delta type takes it for one:
/// the search the server already ran is run again by the client.
#[derive(Default)]
pub struct ServerToolDispatched;

impl Hooks for ServerToolDispatched {
    fn foreign(&self, calls: &mut Calls, event: &Event<'_>, _out: &mut Emit) {
        foreign_as_call(toolcert_scenario::ForeignKind::ServerToolUse, calls, event);
    }
}

/// `custom-input-as-json`: a Responses custom tool call is handled as a function call, so its
/// freeform input goes to the JSON parser: a patch fails as unparseable, an input that
/// happens to be JSON is dispatched as arguments.
#[derive(Default)]
pub struct CustomInputAsJson;

impl Hooks for CustomInputAsJson {
    fn foreign(&self, calls: &mut Calls, event: &Event<'_>, _out: &mut Emit) {
        foreign_as_call(toolcert_scenario::ForeignKind::CustomToolCall, calls, event);
    }
}

/// `thinking-as-text`: every delta with a string payload is shown, so the model's reasoning
/// (`thinking_delta`, `reasoning_content`) appears in the answer.
#[derive(Default)]
pub struct ThinkingAsText;

impl Hooks for ThinkingAsText {
    fn foreign(&self, calls: &mut Calls, event: &Event<'_>, out: &mut Emit) {
        if let Event::ForeignDelta { kind: toolcert_scenario::ForeignKind::Thinking, fragment, .. } = event {
            out.text(fragment);
            calls.layout.push(Slot::Text { text: fragment.to_string() });
        }
    }
}

/// `refusal-as-text`: a refusal delta (`delta.refusal`, `response.refusal.delta`) is shown as
/// if it were the answer's text.
#[derive(Default)]
pub struct RefusalAsText;

impl Hooks for RefusalAsText {
    fn foreign(&self, calls: &mut Calls, event: &Event<'_>, out: &mut Emit) {
        if let Event::ForeignDelta { kind: toolcert_scenario::ForeignKind::Refusal, fragment, .. } = event {
            out.text(fragment);
            calls.layout.push(Slot::Text { text: fragment.to_string() });
        }
    }
}

/// `bad-escape-crashes`: a buffer the model wrote with an invalid escape (`\q`, `\d`) or a
/// raw control character in a string throws out of the parse (`JSON.parse` uncaught, as in
/// anthropic-sdk-typescript#986): the turn dies instead of that one call failing as
/// unparseable.
#[derive(Default)]
pub struct BadEscapeCrashes;

impl Hooks for BadEscapeCrashes {
    fn parse(&self, args: &str) -> Option<Value> {
        let parsed = toolcert_oracle::parse_document(args);
        if parsed.is_none() {
            if let Err(e) = serde_json::from_str::<Value>(args) {
                let m = e.to_string();
                if m.contains("invalid escape") || m.contains("control character") {
                    panic!("SyntaxError: Bad escaped character in JSON ({m})");
                }
            }
        }
        parsed
    }
}
