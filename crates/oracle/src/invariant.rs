//! The invariants: stable ids, the rule each states, and why it matters to a user.

use serde::{Deserialize, Serialize};

/// How hard a rule is. A subject conforms at the grade it passes (as h2spec and Autobahn
/// grade MUST and SHOULD rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grade {
    /// Nothing is dispatched that the model did not finish writing, and every call that
    /// completed is dispatched with exactly its arguments.
    Must,
    /// Per-call accounting: each call gets its own outcome with its reason and raw buffer.
    Should,
}

impl Grade {
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Must => "must",
            Grade::Should => "should",
        }
    }
}

macro_rules! invariants {
    ($($variant:ident = $id:literal, $seed:literal, $rule:literal, $why:literal;)*) => {
        /// A numbered rule: its must and should parts and what exercises it are in docs/SPEC.md §6.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Invariant { $(#[serde(rename = $id)] $variant,)* }

        impl Invariant {
            pub const ALL: &'static [Invariant] = &[$(Invariant::$variant,)*];

            /// The stable id reports and docs use.
            pub fn id(self) -> &'static str { match self { $(Invariant::$variant => $id,)* } }

            /// The seed chapters the rule comes from.
            pub fn seed(self) -> &'static str { match self { $(Invariant::$variant => $seed,)* } }

            /// The rule, in one sentence.
            pub fn rule(self) -> &'static str { match self { $(Invariant::$variant => $rule,)* } }

            /// What goes wrong for users when it is broken.
            pub fn why(self) -> &'static str { match self { $(Invariant::$variant => $why,)* } }

            pub fn from_id(id: &str) -> Option<Invariant> {
                Invariant::ALL.iter().copied().find(|i| i.id().eq_ignore_ascii_case(id))
            }
        }

        impl std::fmt::Display for Invariant {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(self.id()) }
        }

        /// Calls `callback! { args Variant = "ID"; ... }` with every row of the table, so code
        /// in other crates that needs one item per invariant (`toolcert::certify_tests!`, one
        /// test each) is generated from the table and cannot forget a new row. Not usable by
        /// path inside this crate (a macro-expanded `macro_export`).
        #[doc(hidden)]
        #[macro_export]
        macro_rules! for_each_invariant {
            ($callback:path, $args:tt) => { $callback! { $args $($variant = $id;)* } };
        }
    };
}

invariants! {
    AccAccount = "ACC-ACCOUNT", "000",
        "every announced call gets exactly one outcome; no outcome for an unannounced call",
        "a call the model announced silently never reaches the dispatcher, or runs twice, and nothing records it";
    AccFidelity = "ACC-FIDELITY", "002, 000",
        "a dispatched call's args equal the strict parse of exactly the model's document; `raw` in a failure is the buffer as received",
        "the tool runs with arguments the model never wrote (a trimmed space, a mangled escape) and every downstream check passes";
    AccIdentity = "ACC-IDENTITY", "000",
        "outcomes carry the announced call_id and name; same-tool calls stay separate",
        "two calls to the same tool collapse into one: half of the user's request is silently dropped or merged";
    AccOrder = "ACC-ORDER", "000",
        "fragments are joined in arrival order, nothing sorted or re-split",
        "reordered fragments turn \"refunded\" into \"refnuded\"";
    AccCompletion = "ACC-COMPLETION", "002",
        "no outcome for a call before its terminal event; a prefix that parses is not complete",
        "a buffer like {\"limit\": 20} parses and is dispatched before \", \\\"status\\\": ...\" arrives: the call runs without a field";
    AccTruncation = "ACC-TRUNCATION", "003",
        "a truncated turn dispatches nothing; never repaired",
        "a ticket is created whose description stops mid-sentence, because max_tokens cut it and a repair parser closed it";
    AccAbandon = "ACC-ABANDON", "003",
        "a call live at stream end is Failed(abandoned), never dropped, never dispatched",
        "a dropped connection leaves a call that neither ran nor failed: the UI spins forever and no log line says why";
    AccStrict = "ACC-STRICT", "000, 003",
        "an unparseable buffer is Failed(unparseable); no partial or merged dispatch",
        "raw_decode keeps the first of two documents, a repair parser merges them: a call the model never made is run";
    AccProtocol = "ACC-PROTOCOL", "000",
        "unannounced index, duplicate announcement, fragment after stop: a protocol error; a well-formed turn raises none",
        "a replayed or misrouted fragment is silently appended to some call instead of failing the turn";
    AccIsolation = "ACC-ISOLATION", "000",
        "concurrent or successive streams do not share state",
        "one user's query runs with another user's filter, because two streams both used index 1";
    AccText = "ACC-TEXT", "002",
        "text reassembled exactly, no argument bytes in it, block order kept",
        "argument JSON leaks into the chat bubble and the stored message, where markdown destroys it";
    AccSchema = "ACC-SCHEMA", "003",
        "parsed args that violate the tool schema give SchemaError (schema profile)",
        "an invalid enum (priority: \"P1\") is dispatched instead of being answered with an error the model can correct";
    AccChunking = "ACC-CHUNKING", "002",
        "any fragmentation of a turn gives the same observation as the turn delivered whole (the central property)",
        "a client works in tests with short fixtures and fails in production, where the same turn arrives in more pieces";
    WireChat = "WIRE-CHAT", "000, 002",
        "OpenAI Chat: entries are told apart by id where they carry one and by index otherwise (an empty id is no id, a missing index no defect), id and name ride on a call's first entry or are repeated, and one chunk may carry entries of several indices",
        "interleaved parallel calls get their fragments mixed up, because the client keyed entries by chunk, by the last id seen or by index alone, or concatenated the repeated id and name";
    WireDone = "WIRE-DONE", "002",
        "OpenAI Responses: a call's `done` events repeat its arguments and must equal the deltas joined; a call announced only by its output_item.done is a call, and the calls response.completed repeats are not new ones",
        "a replayed or corrupted stream runs arguments that disagree with what was streamed, and nobody notices";
    WireKeepalive = "WIRE-KEEPALIVE", "002",
        "keep-alive and bookkeeping events (ping, usage chunks with or without choices, a prelude chunk, [DONE], in_progress) carry nothing and change nothing",
        "a ping or a usage chunk is taken for content and breaks or ends the turn";
    BytesFraming = "BYTES-FRAMING", "002",
        "SSE framing: LF, CRLF and CR line ends, comment lines and multi-line data, in chunks cut anywhere",
        "a proxy or server that frames its stream slightly differently breaks the client";
    BytesUtf8 = "BYTES-UTF8", "002",
        "a UTF-8 character split across transport chunks is held until complete, never decoded per chunk",
        "an é or an emoji at a chunk boundary becomes U+FFFD or a decode error on a perfectly good stream";
    SubjectCrash = "SUBJECT-CRASH", "-",
        "the subject neither panics nor crashes on any stream",
        "a malformed or unusual stream takes the client down instead of failing one turn";
    AccEnding = "ACC-ENDING", "003",
        "a subject never reports a clean end for a turn that was cut, abandoned or errored, and never reports a stop reason the stream did not carry",
        "a dropped connection is shown as a finished answer (finish_reason \"stop\" made up for a stream that simply stopped): the user trusts half a reply";
    WireUnknown = "WIRE-UNKNOWN", "002",
        "an event or delta of a type the client does not know is skipped; a known event with a defective field fails the turn",
        "a provider adds a delta type (citations_delta) and every turn that carries one fails, or a corrupted known event is silently taken";
    AccForeign = "ACC-FOREIGN", "-",
        "a server-executed or non-call block (thinking, a server tool and its result, a refusal, a custom tool's freeform input) is never dispatched by the client, and none of its bytes joins a call's buffer or the text",
        "the client runs a web search the server already ran, shows the model's hidden reasoning or its refusal as the answer, or feeds a custom tool's text to a JSON parser";
    BytesChecksum = "BYTES-CHECKSUM", "002",
        "binary framing (AWS event stream): a message whose prelude CRC, message CRC or lengths are wrong is refused as a framing error, and nothing after it is taken",
        "a bit flipped on the way (a proxy, a truncated buffer) is decoded as if the provider had sent it, and a call runs with arguments nobody wrote";
    HostilePollution = "HOSTILE-POLLUTION", "-",
        "whatever the stream holds (a `__proto__` index, id, name or key), the client's runtime gains, loses and changes nothing: no prototype or class of the language or the SDK",
        "a hostile gateway or a compatible server run by someone else writes into `Object.prototype` through one chunk, and every object of the process, the next request's included, carries what it wrote";
}

impl Invariant {
    /// The rules added after reports began to carry exercised counts: a report older than
    /// those counts (judged as written) never checked them, so they are `n/a` there.
    pub const NEWER_THAN_EXERCISED_COUNTS: [Invariant; 5] = [
        Invariant::AccEnding,
        Invariant::WireUnknown,
        Invariant::AccForeign,
        Invariant::BytesChecksum,
        Invariant::HostilePollution,
    ];
}
