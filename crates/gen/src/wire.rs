//! Dialect events (docs/SPEC.md §8, "Dialect events"): the plan of which units a turn's wire
//! rendering adds or sends another way ([`WireEvents`]), and how it builds. Every option is
//! sampled for every turn and read only by the dialect it names, so a per-call turn carries
//! both its Anthropic and its Responses options and either dialect finds its own.

use toolcert_scenario::{MismatchIn, Unknown, UnknownKind, WireEvents};

use crate::plan::Inline;
use crate::source::Source;

/// All zero: no dialect event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WirePlan {
    /// Responses: a bit per call (of the first three) announced only by `output_item.done`.
    pub item_only: u8,
    /// Responses: 0 a mismatch in both `done` events, 1 in `function_call_arguments.done`
    /// only, 2 in `output_item.done` only.
    pub mismatch_in: u8,
    /// Anthropic: units of unknown types, each a position (/256 of the body) whose low bit
    /// says delta (0) or event (1).
    pub unknown: Inline<u8, 3>,
    /// Chat: bit 0 the prelude chunk, bit 1 the usage chunk without `choices`.
    pub chat: u8,
    /// Chat: 1 `[DONE]` after a stream without a finish reason; 2 the same with nothing
    /// delivered before it (the turn abandoned before its first event).
    pub done: u8,
    /// Anthropic, Responses, Bedrock (`GenConfig::spliced`): 0 none, else 1 + the position (/256 of
    /// the body) of a second generation's start event.
    pub spliced: u8,
}

impl WirePlan {
    pub fn sample(src: &mut impl Source) -> WirePlan {
        let item_only = if src.chance(10) { 1 + src.below(7) as u8 } else { 0 };
        let mismatch_in = src.weighted(&[50, 15, 35]) as u8;
        let unknown = if src.chance(12) {
            let n = 1 + src.below(3) as usize;
            src.inline_bytes(n)
        } else {
            Inline::default()
        };
        let chat = u8::from(src.chance(10)) | u8::from(src.chance(12)) << 1;
        let done = src.weighted(&[82, 12, 6]) as u8;
        WirePlan { item_only, mismatch_in, unknown, chat, done, spliced: 0 }
    }

    /// Whether the turn is abandoned before its first event (its `[DONE]` is all it sends).
    pub fn done_alone(&self) -> bool {
        self.done % 3 == 2
    }

    /// The dialect events, `body` the neutral events the turn sends before its stop.
    pub fn build(&self, body: usize) -> WireEvents {
        let scale = |b: u8| (usize::from(b) * (body + 1) / 256) as u32;
        WireEvents {
            item_done_only: (0..3u16).filter(|c| self.item_only >> c & 1 == 1).collect(),
            mismatch_in: [MismatchIn::Both, MismatchIn::ArgumentsDone, MismatchIn::ItemDone]
                [usize::from(self.mismatch_in % 3)],
            unknown: self
                .unknown
                .iter()
                .map(|&b| Unknown {
                    kind: if b & 1 == 0 { UnknownKind::Delta } else { UnknownKind::Event },
                    at: scale(b),
                })
                .collect(),
            chat_prelude: self.chat & 1 == 1,
            usage_without_choices: self.chat & 2 == 2,
            done_without_finish: !self.done.is_multiple_of(3),
            // Gemini's renderer varies each call's terminator from the turn itself; drawing
            // them here would change every dialect's generated cases.
            gemini_ends: Vec::new(),
            spliced: (self.spliced > 0).then(|| scale(self.spliced - 1)),
            // Hostile indices come in the hostile named cases only.
            hostile_index: None,
        }
    }
}
