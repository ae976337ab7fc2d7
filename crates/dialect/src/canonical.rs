//! Reading the hottest wire events without serde, when their data has exactly the canonical
//! byte layout the providers (and this harness's renderers) send.
//!
//! Where it sits: the first step of a dialect decoder ([`crate::SseDecoder::decode`]) for a
//! few event shapes (an Anthropic `content_block_delta` or `content_block_stop`, a Responses
//! `response.function_call_arguments.delta` or `response.output_text.delta`). A decoder's
//! fast path reads the data with the [`Cursor`] below, which accepts only that layout (keys
//! in order, no whitespace, no other keys, canonical integers) and answers `None` for
//! anything else; the decoder then parses the data with serde as before. So the fast path
//! only ever accepts a document serde accepts and reads the same values from it, and every
//! refusal and error message is still serde's. Reading a delta this way costs a fraction of
//! a serde parse into the typed structs (no visitor per key, no string unescaped twice).

use std::borrow::Cow;

use crate::json::Str;

/// A position in an event's data, read left to right.
pub(crate) struct Cursor<'a> {
    rest: &'a str,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a str) -> Cursor<'a> {
        Cursor { rest: data }
    }

    /// Consumes exactly `lit` (keys, punctuation and fixed strings of the layout).
    pub fn lit(&mut self, lit: &str) -> Option<()> {
        self.rest = self.rest.strip_prefix(lit)?;
        Some(())
    }

    /// A canonical JSON integer (`0`, or digits not starting with `0`) that fits a `u32`:
    /// what serde reads into a `u32` field, minus forms the renderers never write (`1e2`,
    /// `-0`), which go to serde.
    pub fn u32(&mut self) -> Option<u32> {
        let b = self.rest.as_bytes();
        let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > 10 || (n > 1 && b[0] == b'0') {
            return None;
        }
        // A fraction or an exponent after the digits is a number serde reads otherwise.
        if matches!(b.get(n), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        let v = self.rest[..n].parse::<u32>().ok()?;
        self.rest = &self.rest[n..];
        Some(v)
    }

    /// A JSON string literal, borrowed when it has no escapes. Its runs between escapes
    /// are checked here (no control character, which JSON forbids raw); of the escapes, the
    /// one-character ones (`\"` `\\` `\/` `\b` `\f` `\n` `\r` `\t`) are read here and a
    /// `\u` escape, or anything else after a backslash, is left to serde with the whole
    /// document, so it means exactly what it means to serde.
    pub fn string(&mut self) -> Option<Str<'a>> {
        let mut s = Vec::new();
        Some(Str(match self.string_in(&mut s)? {
            Some(borrowed) => Cow::Borrowed(borrowed),
            None => Cow::Owned(String::from_utf8(s).ok()?),
        }))
    }

    /// [`Cursor::string`] without an allocation: `Some(text)` borrowed from the data when the
    /// literal has no escapes, else `None` with the text unescaped into `scratch` (cleared
    /// first; read it with [`unescaped`]), a buffer the caller keeps from one event to the
    /// next. `None` outside: not a string this reads (left to serde).
    pub fn string_in(&mut self, scratch: &mut Vec<u8>) -> Option<Option<&'a str>> {
        let body = self.rest.strip_prefix('"')?;
        let b = body.as_bytes();
        let stop = special(b, 0)?;
        if b[stop] == b'"' {
            self.rest = &body[stop + 1..];
            return Some(Some(&body[..stop]));
        }
        // Escapes come every few bytes in JSON text carried as a string: each run copied at
        // the escape that ends it. `from` and `i` are at ASCII bytes, so they are character
        // boundaries.
        scratch.clear();
        scratch.reserve(b.len());
        let (mut from, mut i) = (0, stop);
        loop {
            match b[i] {
                b'"' => {
                    run(scratch, &b[from..i]);
                    self.rest = &body[i + 1..];
                    return Some(None);
                }
                b'\\' => {
                    run(scratch, &b[from..i]);
                    scratch.push(match b.get(i + 1)? {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        _ => return None,
                    });
                    from = i + 2;
                    i = special(b, from)?;
                }
                // A control character, which JSON forbids raw.
                _ => return None,
            }
        }
    }

    /// The whole data has been read.
    pub fn end(&self) -> Option<()> {
        self.rest.is_empty().then_some(())
    }
}

/// Appends a run of bytes as they are: the few bytes between two escapes of JSON text carried
/// as a string are copied inline, where a `memcpy` call would cost more than they do.
#[inline(always)]
fn run(v: &mut Vec<u8>, run: &[u8]) {
    if run.len() < 16 {
        v.extend(run.iter().copied());
    } else {
        v.extend_from_slice(run);
    }
}

/// The text [`Cursor::string_in`] unescaped into `scratch`: runs of the data's text cut at
/// ASCII bytes, and ASCII, so always UTF-8 (`None` is never seen, but is no panic).
#[inline]
pub(crate) fn unescaped(scratch: &[u8]) -> Option<&str> {
    std::str::from_utf8(scratch).ok()
}

/// The offset of the first byte at or after `from` that a JSON string cannot hold as it is
/// (a quote, a backslash, a control character), eight bytes at a time.
#[inline]
pub(crate) fn special(b: &[u8], mut i: usize) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    while let Some(word) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let (quote, backslash) = (w ^ (LO * u64::from(b'"')), w ^ (LO * u64::from(b'\\')));
        // A zero byte of `quote` or `backslash`, or a byte of `w` below 0x20: the borrow of
        // a subtraction can only flag bytes above a true one, so the lowest flag is exact.
        let m = ((quote.wrapping_sub(LO) & !quote)
            | (backslash.wrapping_sub(LO) & !backslash)
            | (w.wrapping_sub(LO * 0x20) & !w))
            & HI;
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b.get(i..)?.iter().position(|&c| ESCAPE[c as usize] != 0).map(|p| i + p)
}

/// What follows the backslash of each byte's escape (`0`: written as it is), as `serde_json`
/// escapes: `u` is a `\u00xx` escape.
pub(crate) const ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 0x20 {
        t[c] = b'u';
        c += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0A] = b'n';
    t[0x0C] = b'f';
    t[0x0D] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// Whether decoders take their fast paths: always, except in the tests that compare each
/// fast path with the serde path it stands in for.
pub(crate) fn enabled() -> bool {
    #[cfg(test)]
    {
        !tests::SLOW.with(std::cell::Cell::get)
    }
    #[cfg(not(test))]
    {
        true
    }
}

/// A fast path read an event (counted in the tests, which check that the hot shapes are
/// recognised).
pub(crate) fn taken() {
    #[cfg(test)]
    tests::TAKEN.with(|t| t.set(t.get() + 1));
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    use proptest::strategy::ValueTree;

    use super::Cursor;
    use crate::{Dialect, Quirks, WireMessage};
    use toolcert_render::Event;
    use toolcert_subject::TurnError;

    thread_local! {
        /// Set: the decoders skip their fast paths (this thread only).
        pub static SLOW: Cell<bool> = const { Cell::new(false) };
        /// Events a fast path read (this thread only).
        pub static TAKEN: Cell<usize> = const { Cell::new(0) };
    }

    /// Every control character, both escapes, ASCII, DEL and non-ASCII come out as
    /// `serde_json` writes them.
    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut all: String = (0u8..0x80).map(char::from).collect();
        all.push_str("é ✈ \u{2028} \u{10FFFF} \\\"\\n");
        for s in ["", "plain", "\"", "\\", "a\u{1}b", &all, r#"{"k": "v\"x"}"#] {
            let mut out = crate::json::Payload::with_capacity(0);
            out.raw("x");
            out.str(s);
            assert_eq!(out.finish(), format!("x{}", serde_json::to_string(s).unwrap()), "{s:?}");
        }
    }

    /// The word-at-a-time search for a byte a JSON string escapes finds what a byte-by-byte
    /// look-up does: every byte value at every offset of every length around a word, among
    /// neighbours a borrow could confuse (the bytes next to `"`, `\\` and 0x20, NUL, 0x80, 0xFF).
    #[test]
    fn the_escape_search_agrees_with_the_table() {
        let slow = |b: &[u8], from: usize| (from..b.len()).find(|&i| super::ESCAPE[b[i] as usize] != 0);
        let fills = [b'a', 0x21, 0x23, 0x5B, 0x5D, 0x20, 0x80, 0xFF, 0xA2, 0xDC];
        for len in 0..20 {
            for &f in &fills {
                for at in 0..len {
                    for c in 0..=255u8 {
                        let mut b = vec![f; len];
                        b[at] = c;
                        if at + 2 < len {
                            b[len - 1] = 0;
                        }
                        for from in [0, at, at.saturating_sub(1), len] {
                            assert_eq!(super::special(&b, from), slow(&b, from), "{b:?} from {from}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn numbers_are_written_in_decimal() {
        for n in [0, 7, 10, 99, 1_754_000_000, u64::MAX] {
            let mut out = crate::json::Payload::with_capacity(0);
            out.u64(n);
            assert_eq!(out.finish(), n.to_string());
        }
    }

    #[test]
    fn integers_are_read_only_in_canonical_form() {
        let read = |s: &str| {
            let mut c = Cursor::new(s);
            c.u32().map(|v| (v, c.rest.len()))
        };
        assert_eq!(read("0,"), Some((0, 1)));
        assert_eq!(read("42}"), Some((42, 1)));
        assert_eq!(read("4294967295"), Some((u32::MAX, 0)));
        for s in ["", "-1", "01", "4294967296", "99999999999", "1.0", "1e3", "2E1", "x"] {
            assert_eq!(read(s), None, "{s}");
        }
    }

    #[test]
    fn strings_are_read_as_serde_reads_them_or_left_to_it() {
        let read = |s: &str| {
            let mut c = Cursor::new(s);
            c.string().map(|v| (v.0.into_owned(), c.rest.to_owned()))
        };
        assert_eq!(read(r#""abc"}"#), Some(("abc".into(), "}".into())));
        assert_eq!(read(r#""""#), Some((String::new(), String::new())));
        assert_eq!(read(r#""a\"b\\"x"#), Some(("a\"b\\".into(), "x".into())));
        assert_eq!(read(r#""\/\b\f\n\r\t\\""#), Some(("/\u{8}\u{c}\n\r\t\\".into(), String::new())));
        assert_eq!(read("\"é ✈\"!"), Some(("é ✈".into(), "!".into())));
        // Left to serde, which reads or refuses it with its own message: a raw control
        // character, a bad escape, any `\u` escape, an unterminated string, no string.
        for s in [
            "\"a\nb\"",
            "\"a\\nb\tc\"",
            r#""\x""#,
            r#""\ud800""#,
            r#""\u00e9""#,
            r#""abc"#,
            r#""ab\"#,
            r#""ab\"cd"#,
            "abc",
            "",
        ] {
            assert_eq!(read(s), None, "{s:?}");
        }
    }

    /// The former [`Cursor::string`] (a byte buffer checked as UTF-8 again at the end), the
    /// oracle of the one that unescapes into a reused buffer: the value, and the rest.
    fn string_before(data: &str) -> Option<(String, &str)> {
        let body = data.strip_prefix('"')?;
        let b = body.as_bytes();
        let stop = super::special(b, 0)?;
        if b[stop] == b'"' {
            return Some((body[..stop].to_owned(), &body[stop + 1..]));
        }
        let mut s = Vec::with_capacity(b.len());
        let (mut from, mut i) = (0, stop);
        loop {
            match b[i] {
                b'"' => {
                    s.extend_from_slice(&b[from..i]);
                    return String::from_utf8(s).ok().map(|s| (s, &body[i + 1..]));
                }
                b'\\' => {
                    s.extend_from_slice(&b[from..i]);
                    s.push(match b.get(i + 1)? {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        _ => return None,
                    });
                    from = i + 2;
                    i = super::special(b, from)?;
                }
                _ => return None,
            }
        }
    }

    /// Strings built of pieces that matter to the reader (quotes, every escape, control
    /// characters, runs of every length around the copy's threshold, non-ASCII) are read as
    /// the former reader read them, whether borrowed or unescaped into a buffer that held
    /// the previous string.
    #[test]
    fn strings_are_read_as_the_former_reader_read_them() {
        let pieces = [
            "\"",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\n",
            "\\r",
            "\\t",
            "\\u0041",
            "\\x",
            "\\",
            "a",
            "é",
            "✈",
            "\u{1}",
            "\n",
            "}",
            "0123456789abcdef",
            "0123456789abcde",
            "\u{10FFFF}xyz",
        ];
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut scratch = b"left over".to_vec();
        let mut read = 0;
        for _ in 0..20_000 {
            let mut data = String::from("\"");
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            for k in 0..(rng % 9) {
                data.push_str(pieces[((rng >> (8 + 4 * k)) % pieces.len() as u64) as usize]);
            }
            if rng >> 60 != 0 {
                data.push_str("\"}");
            }
            let mut c = Cursor::new(&data);
            let got = c.string_in(&mut scratch).map(|v| {
                (v.map_or_else(|| super::unescaped(&scratch).unwrap().to_owned(), str::to_owned), c.rest)
            });
            assert_eq!(got, string_before(&data), "{data:?}");
            let mut c = Cursor::new(&data);
            let owned = c.string().map(|v| (v.0.into_owned(), c.rest));
            assert_eq!(owned, string_before(&data), "{data:?}");
            read += usize::from(got.is_some());
        }
        assert!(read > 5_000, "{read} strings read");
    }

    /// What a decoder makes of every event of a stream, one result per event.
    fn decode_all(
        dialect: Dialect,
        quirks: Quirks,
        wire: &[WireMessage],
        slow: bool,
    ) -> Vec<Result<Vec<Event<'static>>, String>> {
        SLOW.with(|s| s.set(slow));
        let mut d = crate::decoder(dialect, quirks);
        let got = wire
            .iter()
            .map(|m| {
                let mut out = Vec::new();
                d.decode(m, &mut out).map(|()| out).map_err(|e: TurnError| format!("{e:?}"))
            })
            .collect();
        SLOW.with(|s| s.set(false));
        got
    }

    /// Every event of 600 generated cases in each SSE dialect decodes to the same neutral
    /// events (or the same error) with and without the fast paths, and the fast paths are
    /// taken (the hot shapes are recognised in the layout the renderers write).
    #[test]
    fn fast_paths_decode_generated_streams_as_serde_does() {
        let cfg = toolcert_gen::GenConfig::default();
        let strategy = toolcert_gen::case_strategy(&cfg);
        let profiles = [(Dialect::Anthropic, Quirks::PLAIN), (Dialect::OpenAiResponses, Quirks::PLAIN)]
            .into_iter()
            .chain(Dialect::OpenAiChat.profiles().map(|p| (Dialect::OpenAiChat, p.quirks)));
        for (dialect, quirks) in profiles {
            let (mut events, mut fast) = (0, 0);
            for k in 0..600 {
                let case = toolcert_gen::strategy::case_tree(&strategy, 11, k).current();
                for t in &case.streams {
                    let neutral = toolcert_render::render(t);
                    let Ok(wire) = crate::render_wire(t, &neutral, dialect, quirks) else { continue };
                    let before = TAKEN.with(Cell::get);
                    let a = decode_all(dialect, quirks, &wire.events, false);
                    fast += TAKEN.with(Cell::get) - before;
                    let b = decode_all(dialect, quirks, &wire.events, true);
                    assert_eq!(a, b, "{dialect:?} {quirks:?}, case {k}");
                    events += wire.events.len();
                }
            }
            // Deltas are most of a stream's events (unless every entry carries its id, or
            // its id and name empty, or a call goes whole: none of those is on the fast path).
            let slow_entries = quirks.chat_repeat_fields
                || quirks.chat_repeat_id
                || quirks.chat_empty_continuations
                || quirks.chat_whole_calls;
            // Azure's `content_filter_results` on every choice, and a hostile upstream's
            // members, are not shapes the fast path reads: their chunks all decode through
            // serde (checked equal above).
            if quirks.chat_content_filters || quirks.hostile {
                continue;
            }
            match slow_entries {
                false => assert!(
                    fast * 2 > events,
                    "{dialect:?} {quirks:?}: {fast} of {events} events on the fast path"
                ),
                true => assert!(fast > 0, "{dialect:?} {quirks:?}: no text chunk on the fast path"),
            }
        }
    }
}
