//! The provider-neutral event: the unit an events-level subject is fed, and what every
//! dialect decoder gives back. Defined here, at the seam, so that a subject needs nothing
//! but this crate; `toolcert-render` produces them from scenarios.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use toolcert_scenario::{ForeignKind, StopReason};

/// A provider-neutral stream event.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event<'a> {
    /// A piece of prose.
    TextDelta { text: Cow<'a, str> },
    /// A call is announced: its positional key is bound to its id and tool name.
    CallStart { index: u32, call_id: Cow<'a, str>, name: Cow<'a, str> },
    /// An argument fragment for the call at `index`.
    ArgsDelta { index: u32, fragment: Cow<'a, str> },
    /// The call at `index` has no more fragments (Anthropic `content_block_stop`,
    /// Responses `function_call_arguments.done`). Where the dialect repeats the whole
    /// argument string here (Responses), `arguments` carries it: it must equal the fragments
    /// joined, or the stream is faulty.
    CallStop {
        index: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arguments: Option<Cow<'a, str>>,
    },
    /// The message-level stop reason (Anthropic `message_delta`, Chat `finish_reason`,
    /// Responses `response.completed` / `response.incomplete`).
    Stop { reason: StopReason },
    /// An error event mid-stream; the stream closes after it.
    Error { message: Cow<'a, str> },
    /// A keep-alive with no content.
    Ping,
    /// A foreign block starts (thinking, a server tool, a refusal, a custom tool call: see
    /// [`ForeignKind`]). Never a call: nothing of it is dispatched, and none of its bytes
    /// joins a call's buffer or the text. `content` is its whole text for the kinds that do
    /// not stream ([`ForeignKind::streams`]). A subject may ignore every foreign event.
    ForeignStart {
        index: u32,
        kind: ForeignKind,
        #[serde(default, skip_serializing_if = "str::is_empty")]
        id: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "str::is_empty")]
        name: Cow<'a, str>,
        #[serde(default, skip_serializing_if = "str::is_empty")]
        content: Cow<'a, str>,
    },
    /// A piece of a foreign block's content. In the interleaved (Chat) shape foreign blocks
    /// have no start or stop, only these, at index 0.
    ForeignDelta { index: u32, kind: ForeignKind, fragment: Cow<'a, str> },
    /// A foreign block ends.
    ForeignStop { index: u32 },
}

impl Event<'_> {
    /// An owned copy, detached from the scenario it borrows from.
    pub fn into_owned(self) -> Event<'static> {
        fn own(c: Cow<'_, str>) -> Cow<'static, str> {
            Cow::Owned(c.into_owned())
        }
        match self {
            Event::TextDelta { text } => Event::TextDelta { text: own(text) },
            Event::CallStart { index, call_id, name } => {
                Event::CallStart { index, call_id: own(call_id), name: own(name) }
            }
            Event::ArgsDelta { index, fragment } => Event::ArgsDelta { index, fragment: own(fragment) },
            Event::CallStop { index, arguments } => Event::CallStop { index, arguments: arguments.map(own) },
            Event::Stop { reason } => Event::Stop { reason },
            Event::Error { message } => Event::Error { message: own(message) },
            Event::Ping => Event::Ping,
            Event::ForeignStart { index, kind, id, name, content } => {
                Event::ForeignStart { index, kind, id: own(id), name: own(name), content: own(content) }
            }
            Event::ForeignDelta { index, kind, fragment } => {
                Event::ForeignDelta { index, kind, fragment: own(fragment) }
            }
            Event::ForeignStop { index } => Event::ForeignStop { index },
        }
    }
}
