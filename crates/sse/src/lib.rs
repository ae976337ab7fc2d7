//! Server-sent events: the byte layer under every dialect.
//!
//! Where it sits in the data flow: scenario → render events → wire (dialect SSE events) →
//! **bytes (SSE chunks)** → subject. A dialect renders a turn as [`SseEvent`]s; [`encode`]
//! frames them as the bytes a server sends (any legal line end, keep-alive comments,
//! multi-line `data`), [`cut`] splits those bytes into transport chunks anywhere (inside a
//! UTF-8 character, inside `data:`, between `\r` and `\n`), and the [`Decoder`] is the first
//! layer of the reference stack: it turns chunks back into events, following the WHATWG
//! `text/event-stream` parsing rules, without ever decoding UTF-8 per chunk.
//!
//! The decoder is strict where the specification is lenient in one respect: the stream must
//! be UTF-8 (the specification replaces bad bytes with U+FFFD; a certification harness wants to
//! hear about them), and memory is bounded by a limit on line and event size. Everything else
//! is the specification's: CR, LF and CRLF line ends (a CRLF split across chunks is one line
//! end), a leading BOM skipped, comment lines, fields without a colon, one leading space
//! removed from values, `data` lines joined with LF, dispatch at a blank line, events without
//! `data` not dispatched, an unterminated event at the end of the stream discarded.
//!
//! **Chunk invariance** holds by construction and is tested: decoding a byte stream in any
//! chunking gives exactly the events, and exactly the error, of decoding it whole.

use std::fmt;

use serde::{Deserialize, Serialize};

mod pretty;

/// One server-sent event: defined at the subject seam (a wire unit), framed here.
pub use toolcert_subject::SseEvent;

/// The line end the encoder writes (all three are legal SSE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LineEnd {
    #[default]
    Lf,
    CrLf,
    Cr,
}

impl LineEnd {
    pub const ALL: [LineEnd; 3] = [LineEnd::Lf, LineEnd::CrLf, LineEnd::Cr];

    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            LineEnd::Lf => b"\n",
            LineEnd::CrLf => b"\r\n",
            LineEnd::Cr => b"\r",
        }
    }
}

/// How [`encode`] lays the events out as bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Framing<'a> {
    pub line_end: LineEnd,
    /// A `: keep-alive` comment line is written before the event at each of these positions
    /// (a position past the last event puts the comment after it; a repeated position writes
    /// several comments).
    pub comments: &'a [u32],
    /// The events at these positions have their data pretty-printed over several `data:`
    /// lines when it is a JSON document (the same document, with whitespace between tokens);
    /// other data is written as usual, one `data:` line per line of it.
    pub multiline: &'a [u32],
}

/// The bytes of an encoded stream.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    pub bytes: Vec<u8>,
    /// `ends[k]` is the offset just past event `k`'s terminating blank line: cutting the
    /// stream there delivers events `0..=k` and nothing of the next.
    pub ends: Vec<usize>,
}

/// The comment line [`Framing::comments`] inserts.
pub const KEEP_ALIVE: &str = ": keep-alive";

/// Frames events as SSE bytes.
///
/// Each event is written as its `event:` line (omitted when `None` or empty), its `id:` line
/// (when `Some`), its `data:` lines (`data: ` with one space, one line per line of the data)
/// and a blank line. What SSE cannot carry is normalised rather than corrupting the framing:
/// a CR, LF or CRLF in `data` becomes a line break between `data:` lines, so it decodes as LF;
/// a line break inside `event` or `id` is written as a space.
pub fn encode<E: std::borrow::Borrow<SseEvent>>(events: &[E], framing: &Framing<'_>) -> Encoded {
    let eol = framing.line_end.as_bytes();
    let mut comments: Vec<usize> = framing.comments.iter().map(|&c| (c as usize).min(events.len())).collect();
    comments.sort_unstable();
    let mut comments = comments.into_iter().peekable();
    let mut out = Encoded {
        // Each event's data, its name and id, and their field names and line ends.
        bytes: Vec::with_capacity(
            events
                .iter()
                .map(|e| {
                    let e = e.borrow();
                    e.data.len()
                        + e.event.as_ref().map_or(0, String::len)
                        + e.id.as_ref().map_or(0, String::len)
                        + 48
                })
                .sum(),
        ),
        ends: Vec::with_capacity(events.len()),
    };
    let b = &mut out.bytes;
    for k in 0..=events.len() {
        while comments.next_if_eq(&k).is_some() {
            b.extend_from_slice(KEEP_ALIVE.as_bytes());
            b.extend_from_slice(eol);
        }
        let Some(e) = events.get(k).map(std::borrow::Borrow::borrow) else { break };
        if let Some(name) = e.event.as_deref().filter(|n| !n.is_empty()) {
            field(b, "event", name, eol);
        }
        if let Some(id) = &e.id {
            field(b, "id", id, eol);
        }
        let pretty = if framing.multiline.contains(&(k as u32)) { pretty::json(&e.data) } else { None };
        for line in lines(pretty.as_deref().unwrap_or(&e.data)) {
            b.extend_from_slice(b"data: ");
            b.extend_from_slice(line.as_bytes());
            b.extend_from_slice(eol);
        }
        b.extend_from_slice(eol);
        out.ends.push(b.len());
    }
    out
}

/// `data` as [`Framing::multiline`] lays it out when it is one JSON document (the same
/// document, re-indented over several lines); `None` when it is not one.
pub fn pretty_json(data: &str) -> Option<String> {
    pretty::json(data)
}

/// Writes `name: value`, with line breaks in the value (which SSE cannot carry) as spaces.
fn field(b: &mut Vec<u8>, name: &str, value: &str, eol: &[u8]) {
    b.extend_from_slice(name.as_bytes());
    b.extend_from_slice(b": ");
    match find_eol(value.as_bytes()) {
        // The usual value: nothing to replace, copied as it is.
        None => b.extend_from_slice(value.as_bytes()),
        Some(_) => b.extend(value.bytes().map(|c| if c == b'\r' || c == b'\n' { b' ' } else { c })),
    }
    b.extend_from_slice(eol);
}

/// The lines of `s` split at CRLF, LF and CR (an empty string is one empty line).
fn lines(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        match memchr::memchr2(b'\r', b'\n', r.as_bytes()) {
            Some(i) => {
                let skip = if r[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&r[i + skip..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// The offset of the first CR or LF in `b`. Transport chunks are often a few bytes and
/// lines a few hundred: eight bytes at a time costs less there than `memchr2`'s set-up,
/// which wins on long runs (a large document on one `data:` line).
#[inline]
fn find_eol(b: &[u8]) -> Option<usize> {
    if b.len() >= 64 {
        return memchr::memchr2(b'\n', b'\r', b);
    }
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while let Some(word) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let (lf, cr) = (w ^ (LO * u64::from(b'\n')), w ^ (LO * u64::from(b'\r')));
        // A zero byte of `lf` or `cr` is an LF or a CR; the borrow of the subtraction can
        // only flag bytes above a true zero, so the lowest flag is exact.
        let m = ((lf.wrapping_sub(LO) & !lf) | (cr.wrapping_sub(LO) & !cr)) & HI;
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..].iter().position(|&c| c == b'\n' || c == b'\r').map(|p| i + p)
}

/// Whether `b` is ASCII without a CR or an LF, eight bytes at a time; a piece shorter than
/// a word (a transport chunk of a stream cut every few bytes) is read as two overlapping
/// halves packed in one word, with no loop.
#[inline]
fn plain_ascii(b: &[u8]) -> bool {
    /// Any flag at all: a high bit, or a zero byte of `lf` or `cr` (exact as a yes or no;
    /// zero bytes of `w` itself are neither).
    #[inline]
    fn flagged(w: u64) -> bool {
        const LO: u64 = 0x0101_0101_0101_0101;
        const HI: u64 = 0x8080_8080_8080_8080;
        let (lf, cr) = (w ^ (LO * u64::from(b'\n')), w ^ (LO * u64::from(b'\r')));
        (w | (lf.wrapping_sub(LO) & !lf) | (cr.wrapping_sub(LO) & !cr)) & HI != 0
    }
    let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("eight bytes"));
    let half = |at: usize| u64::from(u32::from_le_bytes(b[at..at + 4].try_into().expect("four bytes")));
    let n = b.len();
    match n {
        0 => true,
        1..=3 => !flagged(u64::from(b[0]) | u64::from(b[n / 2]) << 8 | u64::from(b[n - 1]) << 16),
        4..=7 => !flagged(half(0) | half(n - 4) << 32),
        _ => {
            let mut at = 0;
            while at + 8 <= n {
                if flagged(word(at)) {
                    return false;
                }
                at += 8;
            }
            // The last bytes, in a word that overlaps the one before.
            at == n || !flagged(word(n - 8))
        }
    }
}

/// Splits `bytes` into transport chunks at the given offsets.
///
/// Offsets are clamped to the length, sorted and deduplicated; offsets at `0` or at the end
/// are dropped, so every chunk is non-empty (a real read never returns zero bytes, and some
/// clients take an empty read for the end of the stream). No offsets: one chunk; empty input:
/// no chunks.
pub fn cut<'a>(bytes: &'a [u8], cuts: &[u32]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|&c| c as usize).filter(|&c| c > 0 && c < bytes.len()).collect();
    at.sort_unstable();
    at.dedup();
    let mut chunks = Vec::with_capacity(at.len() + 1);
    let mut start = 0;
    for c in at {
        chunks.push(&bytes[start..c]);
        start = c;
    }
    if start < bytes.len() {
        chunks.push(&bytes[start..]);
    }
    chunks
}

/// Decodes a whole byte stream (one chunk, then the end of the stream).
pub fn decode_all(bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
    let mut d = Decoder::new();
    let mut out = Vec::new();
    d.feed(bytes, &mut out)?;
    d.finish(&mut out)?;
    Ok(out)
}

/// Why the decoder refused a stream. Compare by [`SseError::kind`], not by message.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum SseError {
    /// A byte sequence that is not UTF-8, starting at this offset of the stream.
    #[error("invalid UTF-8 at byte {offset} of the event stream")]
    InvalidUtf8 { offset: u64 },
    /// The stream ended inside a multi-byte UTF-8 character that starts at this offset.
    #[error("the event stream ends inside a UTF-8 character starting at byte {offset}")]
    TruncatedUtf8 { offset: u64 },
    /// A line, or an event's data, grew past the decoder's limit.
    #[error("SSE {unit} starting at byte {start} is larger than the {limit}-byte limit")]
    TooLarge { unit: Unit, limit: usize, start: u64 },
}

/// What grew past the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    Line,
    Event,
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unit::Line => "line",
            Unit::Event => "event",
        })
    }
}

/// The class of an [`SseError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SseErrorKind {
    InvalidUtf8,
    TruncatedUtf8,
    TooLarge,
}

impl SseError {
    pub fn kind(&self) -> SseErrorKind {
        match self {
            SseError::InvalidUtf8 { .. } => SseErrorKind::InvalidUtf8,
            SseError::TruncatedUtf8 { .. } => SseErrorKind::TruncatedUtf8,
            SseError::TooLarge { .. } => SseErrorKind::TooLarge,
        }
    }
}

/// The UTF-8 byte order mark, skipped at the start of a stream.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// The default limit on a line and on an event's data: 16 MiB.
pub const DEFAULT_LIMIT: usize = 16 << 20;

/// An incremental `text/event-stream` decoder.
///
/// Feed it chunks in order with [`Decoder::feed`] (or take the events one at a time, in a
/// buffer of the caller's, with [`Decoder::pull`]), then call [`Decoder::finish`] at the end
/// of the stream. Bytes of a line (and so of a character) that a chunk leaves unfinished are
/// held until the next chunk; UTF-8 is checked incrementally, so an invalid byte is reported
/// from the chunk that holds it. After an error every call returns the same error. Memory is
/// bounded by about three times the limit (the current line, the event's data, its type and
/// id) whatever the input.
#[derive(Debug)]
pub struct Decoder {
    limit: usize,
    /// Offset (in the stream) of the next byte to be read.
    offset: u64,
    /// Still looking at the first bytes for a BOM; `bom_held` of them matched so far.
    at_start: bool,
    bom_held: usize,
    /// The last line ended with CR: an LF next (even in the next chunk) ends nothing.
    after_cr: bool,
    /// The current line's bytes, when it spans chunks.
    line: Vec<u8>,
    /// How much of `line` is known to be UTF-8 (the rest is an incomplete character).
    checked: usize,
    line_start: u64,
    /// Where the current event's first line began; `None` until it has one.
    event_start: Option<u64>,
    /// The event's `data` values, each followed by LF.
    data: String,
    /// Some `data` line arrived since the last dispatch (the data buffer is non-empty).
    has_data: bool,
    /// The event's type (checked UTF-8, as `data`).
    event: Vec<u8>,
    id: Option<String>,
    failed: Option<SseError>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder::new()
    }
}

impl Decoder {
    /// A decoder with the default limit ([`DEFAULT_LIMIT`]).
    pub fn new() -> Decoder {
        Decoder::with_limit(DEFAULT_LIMIT)
    }

    /// A decoder that refuses any line, or any event's data, larger than `max_event_bytes`.
    pub fn with_limit(max_event_bytes: usize) -> Decoder {
        Decoder {
            limit: max_event_bytes,
            offset: 0,
            at_start: true,
            bom_held: 0,
            after_cr: false,
            line: Vec::new(),
            checked: 0,
            line_start: 0,
            event_start: None,
            data: String::new(),
            has_data: false,
            event: Vec::new(),
            id: None,
            failed: None,
        }
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads one chunk of the stream; dispatched events are appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut pos = 0;
        let mut event = SseEvent::default();
        while self.pull(chunk, &mut pos, &mut event)? {
            out.push(std::mem::take(&mut event));
        }
        Ok(())
    }

    /// Reads `chunk` from `*pos` (at most its length) up to the next event it completes.
    ///
    /// `Ok(true)`: that event is in `event` (whatever it held is replaced; its buffers are
    /// reused, so a caller that keeps one `SseEvent` for the whole stream allocates nothing
    /// per event) and `*pos` is just past the line that dispatched it; call again with the
    /// same chunk and position. `Ok(false)`: the rest of the chunk completes no event, and
    /// `*pos` is its length. Pulling a chunk until `Ok(false)` is exactly [`Decoder::feed`].
    #[inline(always)]
    pub fn pull(&mut self, chunk: &[u8], pos: &mut usize, event: &mut SseEvent) -> Result<bool, SseError> {
        if self.continues_line(chunk, pos) {
            return Ok(false);
        }
        self.pull_slow(chunk, pos, event)
    }

    /// The commonest chunk of a stream cut every few bytes, taken whole when it is one: a
    /// short piece of ASCII with no line end, which only extends the current line. Anything
    /// else (a line end, a byte of a longer character, a line at the limit, the start of the
    /// stream, a CR just before, a failed decoder) is left to the general path, untouched.
    #[inline(always)]
    fn continues_line(&mut self, chunk: &[u8], pos: &mut usize) -> bool {
        let Some(rest) = chunk.get(*pos..) else { return false };
        let plain = !rest.is_empty()
            && rest.len() < 64
            && !self.at_start
            && !self.after_cr
            && self.failed.is_none()
            && self.checked == self.line.len()
            && rest.len() <= self.limit - self.line.len()
            && plain_ascii(rest);
        if plain {
            self.line.extend_from_slice(rest);
            self.checked = self.line.len();
            self.offset += rest.len() as u64;
            *pos = chunk.len();
        }
        plain
    }

    #[inline(never)]
    fn pull_slow(&mut self, chunk: &[u8], pos: &mut usize, event: &mut SseEvent) -> Result<bool, SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.pull_inner(chunk, pos, event);
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    /// The stream has ended. An event without its terminating blank line is discarded (as
    /// the specification says); a character left incomplete is an error. Nothing is ever
    /// dispatched here: `out` is the same as [`Decoder::feed`]'s for symmetry.
    pub fn finish(&mut self, _out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.finish_inner();
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    fn pull_inner(&mut self, chunk: &[u8], pos: &mut usize, event: &mut SseEvent) -> Result<bool, SseError> {
        if self.at_start {
            // The BOM may itself be split across chunks: hold its bytes until it is decided.
            let rest = &chunk[*pos..];
            let mut i = 0;
            while self.bom_held < BOM.len() && i < rest.len() {
                if rest[i] != BOM[self.bom_held] {
                    self.at_start = false;
                    self.unhold_bom()?;
                    break;
                }
                self.bom_held += 1;
                i += 1;
            }
            if self.at_start && self.bom_held == BOM.len() {
                self.at_start = false;
                self.bom_held = 0;
                self.offset += BOM.len() as u64;
                self.line_start = self.offset;
            }
            *pos += i;
            if self.at_start {
                return Ok(false);
            }
        }
        self.process(chunk, pos, event)
    }

    /// The start of a BOM turned out not to be one: its bytes begin the first line (they
    /// hold no line end, so they only extend it).
    fn unhold_bom(&mut self) -> Result<(), SseError> {
        let held = std::mem::take(&mut self.bom_held);
        self.append(&BOM[..held])?;
        self.offset += held as u64;
        Ok(())
    }

    fn finish_inner(&mut self) -> Result<(), SseError> {
        if self.at_start && self.bom_held > 0 {
            // A stream that is only the start of a BOM: those bytes are an unfinished character.
            self.at_start = false;
            self.unhold_bom()?;
        }
        if let Err(e) = std::str::from_utf8(&self.line[self.checked..]) {
            let at = self.line_start + (self.checked + e.valid_up_to()) as u64;
            return Err(match e.error_len() {
                Some(_) => SseError::InvalidUtf8 { offset: at },
                None => SseError::TruncatedUtf8 { offset: at },
            });
        }
        // Whatever is pending is an unterminated line or event: discarded.
        self.line.clear();
        self.checked = 0;
        self.reset_event();
        Ok(())
    }

    fn process(&mut self, chunk: &[u8], pos: &mut usize, event: &mut SseEvent) -> Result<bool, SseError> {
        let mut rest = &chunk[*pos..];
        while let Some(&first) = rest.first() {
            if std::mem::take(&mut self.after_cr) && first == b'\n' {
                // The LF of a CRLF whose CR ended the previous line (possibly in another chunk).
                rest = &rest[1..];
                self.offset += 1;
                self.line_start = self.offset;
                continue;
            }
            let Some(p) = find_eol(rest) else {
                // The commonest chunk of a stream cut every few bytes: the middle of a line.
                self.append(rest)?;
                self.offset += rest.len() as u64;
                break;
            };
            self.after_cr = rest[p] == b'\r';
            let dispatched = if self.line.is_empty() {
                // The whole line is in this chunk: read in place.
                self.complete_line(&rest[..p], event)?
            } else {
                self.append(&rest[..p])?;
                let line = std::mem::take(&mut self.line);
                let r = self.complete_line(&line, event);
                self.line = line;
                self.line.clear();
                self.checked = 0;
                r?
            };
            self.offset += (p + 1) as u64;
            self.line_start = self.offset;
            rest = &rest[p + 1..];
            if dispatched {
                *pos = chunk.len() - rest.len();
                return Ok(true);
            }
        }
        *pos = chunk.len();
        Ok(false)
    }

    /// Holds part of a line that continues in the next chunk, checking UTF-8 as it goes.
    fn append(&mut self, seg: &[u8]) -> Result<(), SseError> {
        let room = self.limit - self.line.len();
        let over = seg.len() > room;
        self.line.extend_from_slice(&seg[..seg.len().min(room)]);
        // Only what fits is checked, so the error reported does not depend on the chunking:
        // a proven UTF-8 error within the first `limit` bytes wins, then the size. A piece
        // of a line is often a few ASCII bytes, which `is_ascii` settles in a fraction of
        // what `from_utf8` takes to start.
        if self.line[self.checked..].is_ascii() {
            self.checked = self.line.len();
        } else {
            self.check_held()?;
        }
        if over {
            return Err(SseError::TooLarge { unit: Unit::Line, limit: self.limit, start: self.line_start });
        }
        Ok(())
    }

    /// Checks the held line's bytes past `checked`: an invalid sequence is an error, an
    /// incomplete character at the end waits for the next chunk.
    fn check_held(&mut self) -> Result<(), SseError> {
        match std::str::from_utf8(&self.line[self.checked..]) {
            Ok(_) => self.checked = self.line.len(),
            Err(e) => match e.error_len() {
                Some(_) => {
                    return Err(SseError::InvalidUtf8 {
                        offset: self.line_start + (self.checked + e.valid_up_to()) as u64,
                    })
                }
                None => self.checked += e.valid_up_to(),
            },
        }
        Ok(())
    }

    /// A whole line (without its line end): check it and apply it; whether it dispatched
    /// an event (into `event`).
    fn complete_line(&mut self, line: &[u8], event: &mut SseEvent) -> Result<bool, SseError> {
        if line.len() > self.limit {
            // Same rule as `append`: a UTF-8 error proven within the limit wins.
            if let Err(e) = std::str::from_utf8(&line[..self.limit]) {
                if e.error_len().is_some() {
                    return Err(SseError::InvalidUtf8 { offset: self.line_start + e.valid_up_to() as u64 });
                }
            }
            return Err(SseError::TooLarge { unit: Unit::Line, limit: self.limit, start: self.line_start });
        }
        if let Some(value) = line.strip_prefix(b"data:") {
            // The commonest line, and the longest: its value is checked once, as the text
            // it is kept as (the field name is ASCII, so offsets in it are offsets in the line).
            let value = match std::str::from_utf8(value) {
                Ok(v) => v,
                Err(e) => {
                    return Err(SseError::InvalidUtf8 {
                        offset: self.line_start + (5 + e.valid_up_to()) as u64,
                    })
                }
            };
            let start = *self.event_start.get_or_insert(self.line_start);
            self.push_data(value.strip_prefix(' ').unwrap_or(value), start)?;
            return Ok(false);
        }
        // An ASCII line (nearly every other line) needs no more; a character cut short by the
        // line end is as invalid as a bad byte.
        if !line.is_ascii() {
            if let Err(e) = std::str::from_utf8(line) {
                return Err(SseError::InvalidUtf8 { offset: self.line_start + e.valid_up_to() as u64 });
            }
        }
        self.apply(line, event)
    }

    /// Applies a line known to be UTF-8: its field names and separators are ASCII, so it is
    /// read as bytes and every part of it is UTF-8 too.
    fn apply(&mut self, line: &[u8], event: &mut SseEvent) -> Result<bool, SseError> {
        let Some(&first) = line.first() else {
            return Ok(self.dispatch(event));
        };
        let start = *self.event_start.get_or_insert(self.line_start);
        if first == b':' {
            return Ok(false);
        }
        // The name ends at the first colon (`data:` lines are read before): the other field
        // of nearly every event is recognised by its prefix, without a search.
        let (name, value) = if let Some(v) = line.strip_prefix(b"event:") {
            (&b"event"[..], v)
        } else {
            match line.iter().position(|&c| c == b':') {
                Some(i) => (&line[..i], &line[i + 1..]),
                None => (line, &[][..]),
            }
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        match name {
            b"data" => self.push_data(utf8(value), start)?,
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            // The specification ignores an id containing NUL.
            b"id" if !value.contains(&0) => self.id = Some(utf8(value).to_owned()),
            // `retry` only matters for reconnection; unknown fields are ignored.
            _ => {}
        }
        Ok(false)
    }

    fn push_data(&mut self, value: &str, start: u64) -> Result<(), SseError> {
        if self.data.len() + value.len() + 1 > self.limit {
            return Err(SseError::TooLarge { unit: Unit::Event, limit: self.limit, start });
        }
        self.data.push_str(value);
        self.data.push('\n');
        self.has_data = true;
        Ok(())
    }

    /// Dispatches the event (into `event`, whose buffers the next one reuses): whether there
    /// was one (an event without `data` is not dispatched).
    fn dispatch(&mut self, event: &mut SseEvent) -> bool {
        let sent = self.has_data;
        if sent {
            // The LF after the last data line is dropped; the data changes places with the
            // caller's previous buffer, which this decoder then fills (no copy, no allocation).
            self.data.pop();
            std::mem::swap(&mut self.data, &mut event.data);
            if self.event.is_empty() {
                event.event = None;
            } else if event.event.as_deref().map(str::as_bytes) != Some(&self.event[..]) {
                let name = utf8(&self.event);
                match &mut event.event {
                    Some(s) => {
                        s.clear();
                        s.push_str(name);
                    }
                    slot => *slot = Some(name.to_owned()),
                }
            }
            event.id = self.id.take();
        }
        self.reset_event();
        sent
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.has_data = false;
        self.event.clear();
        self.id = None;
        self.event_start = None;
    }
}

/// The text of a field value of a line already checked to be UTF-8 (cut at ASCII bytes).
fn utf8(b: &[u8]) -> &str {
    std::str::from_utf8(b).expect("lines are checked to be UTF-8")
}

#[cfg(test)]
mod oracle;
#[cfg(test)]
mod tests;
