//! What the three dialects share: building the wire stream, reading payloads, fake ids.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::Serialize;
use toolcert_render::{Event, Rendered};
use toolcert_scenario::{Block, Turn};
use toolcert_sse::SseEvent;
use toolcert_subject::TurnError;

use crate::{malformed, Dialect, SseStream as WireStream};

/// The wire stream being built, with how many neutral events each wire event completes.
#[derive(Default)]
pub(crate) struct Out {
    pub wire: WireStream,
    /// Set, at the bytes level: each event is framed into these SSE bytes as it is rendered
    /// (its `upto` still counted in `wire`), not kept as an event.
    pub sse: Option<crate::bytes::Sse>,
    /// Set, at the bytes level, for an Anthropic turn with units of unknown types: placed
    /// among the events as they are framed.
    pub units: Option<crate::anthropic::Units>,
}

impl Out {
    /// Room for about `events` wire events (a dialect sends about one per neutral event), so
    /// the lists grow once at most.
    pub fn with_capacity(events: usize) -> Out {
        let mut wire = WireStream::default();
        wire.events.reserve(events);
        wire.upto.reserve(events);
        Out { wire, sse: None, units: None }
    }

    /// The units due before the next event, named `name` and completing `delivered` neutral
    /// events (`None`: the stream's end), each completing what the event before it does.
    fn place_units(&mut self, next: Option<(Option<&str>, u32)>) {
        let Some(mut units) = self.units.take() else { return };
        let w = self.wire.upto.len();
        let before = self.wire.upto.last().copied().unwrap_or(0);
        let (sse, wire) = (&mut self.sse, &mut self.wire);
        units.before(w, next, |name, data| {
            match sse {
                Some(sse) => sse.event_with(wire.upto.len(), Some(name), true, |p| p.raw(data)),
                None => wire.events.push(SseEvent {
                    event: Some(name.to_owned()),
                    data: data.to_owned(),
                    id: None,
                }),
            }
            wire.upto.push(before);
        });
        self.units = Some(units);
    }

    /// A content block `open` started (what the units placed after it see).
    pub fn started(&mut self, open: crate::anthropic::Open) {
        if let Some(u) = &mut self.units {
            u.started(open);
        }
    }

    /// The content block at `index` stopped.
    pub fn stopped(&mut self, index: u32) {
        if let Some(u) = &mut self.units {
            u.stopped(index);
        }
    }

    /// Appends a wire event after which `delivered` neutral events are complete.
    pub fn push(&mut self, name: Option<&str>, data: String, delivered: usize) {
        let delivered = delivered as u32;
        debug_assert!(self.wire.upto.last().is_none_or(|&u| u <= delivered));
        if self.units.is_some() {
            self.place_units(Some((name, delivered)));
        }
        match &mut self.sse {
            // Data of any kind: its line breaks are looked for.
            Some(sse) => sse.event_with(self.wire.upto.len(), name, false, |p| p.raw(&data)),
            None => self.wire.events.push(SseEvent { event: name.map(str::to_owned), data, id: None }),
        }
        self.wire.upto.push(delivered);
    }

    /// An `Out` that frames each event into SSE bytes as it is rendered, for `turn` (its
    /// transport's framing) and `neutral`, sized once for a dialect that sends the neutral
    /// text about `copies` times and about `per_event` bytes of envelope an event (a buffer
    /// that grows copies all it holds).
    pub fn framing(turn: &Turn, neutral: &Rendered<'_>, copies: usize, per_event: usize) -> Out {
        let text = text_len(neutral);
        let events = neutral.events.len() + 4;
        let sse = crate::bytes::Sse::new(
            &crate::framing(&turn.transport),
            events,
            text * copies + text / 4 + events * per_event,
        );
        let mut out = Out::with_capacity(0);
        out.wire.upto.reserve(events);
        out.sse = Some(sse);
        out
    }

    /// The bytes framed (an `Out` from [`Out::framing`]), cut as `turn`'s transport says; with
    /// its tail, part of `next` (the event the stream would have sent next) after them.
    pub fn framed(mut self, turn: &Turn, next: Option<&SseEvent>) -> Option<crate::BytesStream> {
        self.place_units(None);
        Some(self.sse?.finish(&self.wire.upto, &turn.transport, next))
    }

    /// Appends a wire event named `name` after which `delivered` neutral events are complete,
    /// its data written by `write`: in place at the bytes level, else into a payload of about
    /// `size` bytes.
    pub fn with(
        &mut self,
        name: Option<&str>,
        size: usize,
        write: impl FnOnce(&mut Payload),
        delivered: usize,
    ) {
        let delivered = delivered as u32;
        debug_assert!(self.wire.upto.last().is_none_or(|&u| u <= delivered));
        if self.units.is_some() {
            self.place_units(Some((name, delivered)));
        }
        match &mut self.sse {
            // A payload written through `Payload` is JSON: no raw line break.
            Some(sse) => sse.event_with(self.wire.upto.len(), name, true, write),
            None => {
                let mut p = Payload::with_capacity(size);
                write(&mut p);
                self.wire.events.push(SseEvent {
                    event: name.map(str::to_owned),
                    data: p.finish(),
                    id: None,
                });
            }
        }
        self.wire.upto.push(delivered);
    }

    /// Appends `payload` as [`Out::json`] would, written into the event's data by `write`
    /// (by hand, the bytes `to_json` writes; in the tests, serde's when [`serde_oracle`]
    /// says so).
    pub fn written<T: Serialize>(
        &mut self,
        name: Option<&str>,
        payload: &T,
        write: impl FnOnce(&T, &mut Payload),
        delivered: usize,
    ) {
        #[cfg(test)]
        if serde_oracle::on() {
            return self.json(name, payload, delivered);
        }
        self.with(name, 0, |p| write(payload, p), delivered);
    }

    /// Appends `payload` as JSON data under event name `name`.
    pub fn json<T: Serialize>(&mut self, name: Option<&str>, payload: &T, delivered: usize) {
        self.push(name, to_json(payload), delivered);
    }
}

/// A JSON payload written by hand, as bytes (compact, as `serde_json` writes it).
pub(crate) struct Payload(pub Vec<u8>);

impl Payload {
    pub fn with_capacity(n: usize) -> Payload {
        Payload(Vec::with_capacity(n))
    }

    /// Room for `n` more bytes.
    pub fn reserve(&mut self, n: usize) {
        self.0.reserve(n);
    }

    /// Appends `s` as it is (punctuation, keys the layout fixes).
    pub fn raw(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    /// Appends `s` as a JSON string literal, escaped as `serde_json` escapes it.
    pub fn str(&mut self, s: &str) {
        escape(&mut self.0, s.as_bytes());
    }

    /// Appends `n` in decimal.
    pub fn u64(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.0.extend_from_slice(&digits[at..]);
    }

    /// The payload: UTF-8, as it is made of whole `&str`s split at ASCII bytes and ASCII.
    pub fn finish(self) -> String {
        String::from_utf8(self.0).expect("whole strings split at ASCII bytes, and ASCII")
    }
}

/// Appends `s` as a JSON string literal, escaped byte for byte as `serde_json` escapes it
/// (`\"`, `\\`, `\b` `\t` `\n` `\f` `\r`, other control characters as `\u00xx` in lower
/// case, everything else as it is).
///
/// JSON text carried as a string has an escape every few bytes, where a copy per run costs
/// more than the run: past the first escape, eight bytes at a time are stored into a buffer
/// on the stack whatever they hold, and the write position moves past the ones that needed
/// no escape (the rest is overwritten), the buffer going to `v` when it fills.
pub(crate) fn escape(v: &mut Vec<u8>, s: &[u8]) {
    const CAP: usize = 256;
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let Some(first) = crate::canonical::special(s, 0) else {
        v.reserve(s.len() + 2);
        v.push(b'"');
        v.extend_from_slice(s);
        v.push(b'"');
        return;
    };
    v.reserve(s.len() + 8);
    v.push(b'"');
    v.extend_from_slice(&s[..first]);
    // At the top of the loop `n <= CAP`; an iteration adds at most 7 + 6 bytes.
    let mut buf = [0u8; CAP + 16];
    let (mut n, mut i) = (0, first);
    while i < s.len() {
        if n > CAP {
            v.extend_from_slice(&buf[..n]);
            n = 0;
        }
        if let Some(word) = s.get(i..i + 8) {
            buf[n..n + 8].copy_from_slice(word);
            let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            let (quote, backslash) = (w ^ (LO * u64::from(b'"')), w ^ (LO * u64::from(b'\\')));
            // As `canonical::special`: the lowest flag is the first byte to escape.
            let m = ((quote.wrapping_sub(LO) & !quote)
                | (backslash.wrapping_sub(LO) & !backslash)
                | (w.wrapping_sub(LO * 0x20) & !w))
                & HI;
            if m == 0 {
                n += 8;
                i += 8;
                continue;
            }
            let j = (m.trailing_zeros() / 8) as usize;
            n += j;
            i += j;
        }
        let c = s[i];
        match crate::canonical::ESCAPE[c as usize] {
            0 => {
                buf[n] = c;
                n += 1;
            }
            b'u' => {
                buf[n..n + 6].copy_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(c >> 4) as usize],
                    HEX[(c & 0xF) as usize],
                ]);
                n += 6;
            }
            e => {
                buf[n] = b'\\';
                buf[n + 1] = e;
                n += 2;
            }
        }
        i += 1;
    }
    buf[n] = b'"';
    v.extend_from_slice(&buf[..n + 1]);
}

/// A JSON object being written by hand into a [`Payload`] (compact, as `serde_json` writes
/// it: keys in the order written, a comma between members).
pub(crate) struct Obj<'b> {
    b: &'b mut Payload,
    first: bool,
}

impl<'b> Obj<'b> {
    pub fn open(b: &'b mut Payload) -> Obj<'b> {
        b.raw("{");
        Obj { b, first: true }
    }

    /// The next member's key (a fixed identifier: nothing to escape), for its value.
    pub fn key(&mut self, k: &str) -> Val<'_> {
        if !self.first {
            self.b.raw(",");
        }
        self.first = false;
        self.b.raw("\"");
        self.b.raw(k);
        self.b.raw("\":");
        Val(self.b)
    }

    pub fn close(self) {
        self.b.raw("}");
    }
}

/// Where a member's value goes.
pub(crate) struct Val<'b>(&'b mut Payload);

impl<'b> Val<'b> {
    pub fn str(self, s: &str) {
        self.0.str(s);
    }

    /// A string, or `null`.
    pub fn opt_str(self, s: Option<&str>) {
        match s {
            Some(s) => self.0.str(s),
            None => self.0.raw("null"),
        }
    }

    pub fn u64(self, n: u64) {
        self.0.u64(n);
    }

    /// Bytes written as they are (`[]`, `{}`, `null`, an array's bracket).
    pub fn raw(self, s: &str) -> Val<'b> {
        self.0.raw(s);
        self
    }

    pub fn obj(self) -> Obj<'b> {
        Obj::open(self.0)
    }

    pub fn buf(&mut self) -> &mut Payload {
        self.0
    }

    /// The same place, for one more value (an array's next element).
    pub fn reborrow(&mut self) -> Val<'_> {
        Val(self.0)
    }
}

/// The switch of the tests that compare every hand-written payload with serde's: set, the
/// renderers serialise with serde as they did before (this thread only).
/// The bytes of neutral text (prose, arguments, foreign content) `neutral` carries: what a
/// dialect's byte buffer is sized from.
pub(crate) fn text_len(neutral: &Rendered<'_>) -> usize {
    neutral
        .events
        .iter()
        .map(|e| match e {
            Event::TextDelta { text: s } | Event::ArgsDelta { fragment: s, .. } => s.len(),
            Event::ForeignDelta { fragment, .. } => fragment.len(),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
pub(crate) mod serde_oracle {
    use std::cell::Cell;

    thread_local! {
        static ON: Cell<bool> = const { Cell::new(false) };
    }

    pub fn on() -> bool {
        ON.with(Cell::get)
    }

    /// `f` run with the renderers on serde.
    pub fn with<R>(f: impl FnOnce() -> R) -> R {
        ON.with(|o| o.set(true));
        let r = f();
        ON.with(|o| o.set(false));
        r
    }
}

/// Serialises a wire payload. The payloads are plain structs of strings, numbers and
/// options, which always serialise.
pub(crate) fn to_json<T: Serialize>(payload: &T) -> String {
    serde_json::to_string(payload).expect("wire payloads are plain data")
}

/// A string field of the wire types: rendered as it is, and read borrowing from the event's
/// data when it has no escapes, so decoders copy only what they hand on.
#[derive(Clone)]
pub(crate) struct Str<'a>(pub Cow<'a, str>);

impl<'a> Str<'a> {
    /// A string to render, borrowed.
    pub fn of(s: &'a str) -> Str<'a> {
        Str(Cow::Borrowed(s))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn owned(self) -> Cow<'static, str> {
        Cow::Owned(self.0.into_owned())
    }
}

impl Serialize for Str<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Str<'a>, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Str<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'a>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

/// Reads an event's data as `T`; anything else is `Malformed`, naming the event and the
/// path of the field at fault.
pub(crate) fn parse<'a, T: Deserialize<'a>>(event: &str, data: &'a str) -> Result<T, TurnError> {
    // Plain serde first: tracking the path costs as much again as the parse (every key
    // copied), and it is only needed to explain an error, which the second parse finds at
    // the same place.
    let mut de = serde_json::Deserializer::from_str(data);
    if let Ok(value) = T::deserialize(&mut de).and_then(|v| de.end().map(|()| v)) {
        return Ok(value);
    }
    let mut de = serde_json::Deserializer::from_str(data);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        match inner.classify() {
            serde_json::error::Category::Data if path == "." => malformed(format!("{event}: {inner}")),
            serde_json::error::Category::Data => malformed(format!("{event}: {path}: {inner}")),
            _ => malformed(format!("{event}: data is not JSON: {inner}")),
        }
    })?;
    de.end().map_err(|e| malformed(format!("{event}: data is not one JSON document: {e}")))?;
    Ok(value)
}

/// Just the `type` of a payload, for events that have no `event:` line.
#[derive(serde::Deserialize)]
pub(crate) struct Typed<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
}

/// The event's name: its `event:` line, or else its data's `type`.
pub(crate) fn event_name(event: &SseEvent) -> Result<Cow<'_, str>, TurnError> {
    match &event.event {
        Some(name) => Ok(Cow::Borrowed(name)),
        None => Ok(parse::<Typed<'_>>("event without a name", &event.data)?.kind.0),
    }
}

/// The data's `type`, when present, must be the event's name (as the providers send it).
pub(crate) fn check_type(name: &str, kind: &Option<Str<'_>>) -> Result<(), TurnError> {
    match kind {
        Some(k) if k.as_str() != name => {
            Err(malformed(format!("{name}: type: the data says `{}` under event `{name}`", k.as_str())))
        }
        _ => Ok(()),
    }
}

/// Neutral events are handed on owned.
pub(crate) fn own(s: Str<'_>) -> Cow<'static, str> {
    s.owned()
}

/// Deterministic provider-looking ids, seeded from the turn so different turns differ.
pub struct Ids {
    seed: u64,
}

impl Ids {
    /// Ids of a given seed (the tests').
    #[cfg(test)]
    pub(crate) fn with_seed(seed: u64) -> Ids {
        Ids { seed }
    }

    pub fn new(turn: &Turn) -> Ids {
        // FNV-1a over the calls' ids and names and the text lengths.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut eat = |bytes: &[u8]| {
            for &b in bytes {
                h ^= b as u64;
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
            h ^= 0xff;
            h = h.wrapping_mul(0x0100_0000_01b3);
        };
        for b in &turn.blocks {
            match b {
                Block::Call(c) => {
                    eat(c.call_id.as_bytes());
                    eat(c.name.as_bytes());
                }
                Block::Text(t) => eat(&(t.text.len() as u64).to_le_bytes()),
                Block::Foreign(f) => eat(f.id.as_bytes()),
            }
        }
        Ids { seed: h }
    }

    /// One byte of the seed, for choices that vary from turn to turn (Gemini's terminators).
    pub(crate) fn seed_byte(&self) -> u8 {
        (self.seed ^ (self.seed >> 29)) as u8
    }

    /// `prefix` then `len` characters of `alphabet`, derived from the turn and `salt`.
    fn make(&self, prefix: &str, salt: &[u8], len: usize, alphabet: &[u8]) -> String {
        let mut x = self.seed;
        for &b in salt {
            x = (x ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        let mut s = Vec::with_capacity(prefix.len() + len);
        s.extend_from_slice(prefix.as_bytes());
        s.extend((0..len).map(|_| {
            // xorshift64*
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
            alphabet[(r >> 32) as usize % alphabet.len()]
        }));
        String::from_utf8(s).expect("a prefix and ASCII letters")
    }

    pub fn base62(&self, prefix: &str, salt: &str, len: usize) -> String {
        self.base62_salted(prefix, salt.as_bytes(), len)
    }

    /// [`Ids::base62`] with the salt as bytes.
    pub(crate) fn base62_salted(&self, prefix: &str, salt: &[u8], len: usize) -> String {
        self.make(prefix, salt, len, b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
    }

    pub fn hex(&self, prefix: &str, salt: &str, len: usize) -> String {
        self.make(prefix, salt.as_bytes(), len, b"0123456789abcdef")
    }
}

/// A rough token count for usage fields: providers count about four bytes per token.
pub(crate) fn tokens(events: &[Event<'_>]) -> u32 {
    let bytes: usize = events
        .iter()
        .map(|e| match e {
            Event::TextDelta { text } => text.len(),
            Event::ArgsDelta { fragment, .. } => fragment.len(),
            Event::CallStart { name, .. } => name.len() + 8,
            _ => 0,
        })
        .sum();
    (bytes / 4) as u32 + 1
}

/// The SSE dialect one event shows, if it shows one: by the event's name (a dialect's own,
/// [`crate::DialectDef::names_event`]), else by its data as a dialect reads it
/// ([`crate::DialectDef::shows_in_data`]), else by the data's `type` as an event name.
pub(crate) fn detect_one(event: &SseEvent) -> Option<Dialect> {
    let by_name = |name: &str| crate::registry().iter().find(|d| d.names_event(name)).map(|d| d.id());
    if let Some(name) = &event.event {
        if let Some(d) = by_name(name) {
            return Some(d);
        }
    }
    if let Some(d) = crate::registry().iter().find(|d| d.shows_in_data(event)) {
        return Some(d.id());
    }
    #[derive(serde::Deserialize)]
    struct Typed<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<Str<'a>>,
    }
    let typed: Typed<'_> = serde_json::from_str(&event.data).ok()?;
    typed.kind.and_then(|k| by_name(k.as_str()))
}

/// A wire field the decoder reads only for being there (Chat's `usage`): rendered from `T`,
/// and read as whatever JSON it is.
pub(crate) enum Seen<T> {
    Sent(T),
    Read,
}

impl<T: Serialize> Serialize for Seen<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Seen::Sent(t) => t.serialize(s),
            Seen::Read => s.serialize_unit(),
        }
    }
}

impl<'de, T> Deserialize<'de> for Seen<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Seen<T>, D::Error> {
        de::IgnoredAny::deserialize(d).map(|_| Seen::Read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Ids::make` as it was (the oracle): each letter pushed as a `char`.
    fn make_before(ids: &Ids, prefix: &str, salt: &str, len: usize, alphabet: &[u8]) -> String {
        let mut x = ids.seed;
        for &b in salt.as_bytes() {
            x = (x ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        let mut s = String::with_capacity(prefix.len() + len);
        s.push_str(prefix);
        for _ in 0..len {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d);
            s.push(alphabet[(r >> 32) as usize % alphabet.len()] as char);
        }
        s
    }

    /// Ids of every length, prefix and salt (empty, long, non-ASCII) are the former ones.
    #[test]
    fn ids_are_made_as_before() {
        for seed in [0, 1, 0xcbf2_9ce4_8422_2325, u64::MAX] {
            let ids = Ids { seed };
            for (prefix, salt) in
                [("", ""), ("msg_01", "message"), ("chatcmpl-", "chunk"), ("é", "p12345"), ("", "✈")]
            {
                for len in [0, 1, 4, 22, 32, 100] {
                    assert_eq!(
                        ids.base62(prefix, salt, len),
                        make_before(
                            &ids,
                            prefix,
                            salt,
                            len,
                            b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                        )
                    );
                    assert_eq!(
                        ids.hex(prefix, salt, len),
                        make_before(&ids, prefix, salt, len, b"0123456789abcdef")
                    );
                }
            }
        }
    }
}
