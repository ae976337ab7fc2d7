//! The bytes level of the SSE dialects: a wire stream encoded as SSE bytes and cut into
//! transport chunks (a dialect with a binary framing brings its own
//! [`crate::DialectDef::render_bytes`], and may reuse [`resolve`] for its cuts).
//!
//! Where it sits: scenario → events → wire → **bytes** → subject. The scenario's
//! [`Transport`] says the line end, comment lines, multi-line data and where the transport
//! cuts; cuts are aimed at kinds of place (inside a multi-byte character, inside `data:`,
//! between `\r` and `\n`) and resolved here against the actual bytes.

use toolcert_scenario::{Cut, CutAim, Tail, TailAim, Transport};
use toolcert_sse::{Framing, SseEvent, KEEP_ALIVE};
use toolcert_subject::{Chunks, WireMessage};

use crate::json::Payload;
use crate::{framing, WireStream};

/// A stream as transport chunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BytesStream {
    pub chunks: Chunks,
    /// `upto[c]`: neutral events delivered in full once chunks `0..=c` have arrived.
    pub upto: Vec<u32>,
    /// The cut offsets used, sorted.
    pub cuts: Vec<usize>,
}

/// Encodes `wire` as SSE bytes framed and cut as `transport` says (a message that is not an
/// SSE event is not sent: an SSE dialect renders none).
pub(crate) fn render_sse_bytes(wire: &WireStream, transport: &Transport) -> BytesStream {
    let f = framing(transport);
    let next = transport.tail.and(wire.next.as_ref().and_then(WireMessage::as_sse));
    let (mut n, mut len) = (0, 0);
    for e in wire.events.iter().filter_map(WireMessage::as_sse).chain(next) {
        n += 1;
        len += e.data.len()
            + e.event.as_ref().map_or(0, String::len)
            + e.id.as_ref().map_or(0, String::len)
            + 48;
    }
    let mut sse = Sse::new(&f, n, len);
    for (k, e) in wire.events.iter().filter_map(WireMessage::as_sse).enumerate() {
        sse.event(k, e);
    }
    sse.comments_at(usize::MAX);
    sse.tail(transport, next);
    let cuts = resolve(&sse.bytes, &transport.cuts);
    chunked(&wire.upto, sse.bytes, &sse.ends, cuts)
}

/// SSE events framed into one buffer as [`toolcert_sse::encode`] frames them (its output
/// byte for byte, which the tests check), with short pieces (field names, line ends, event
/// names) copied inline rather than by a `memcpy` call each. A renderer may frame its events
/// here as it renders them ([`Sse::event_with`]), writing each payload in place.
pub(crate) struct Sse {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    eol: &'static [u8],
    /// Where the keep-alive comments go (event indices, sorted), not yet written.
    comments: Vec<usize>,
    next_comment: usize,
    multiline: Vec<u32>,
}

impl Sse {
    /// Room for `events` events of about `len` bytes, framed as `f` says.
    pub fn new(f: &Framing<'_>, events: usize, len: usize) -> Sse {
        let mut comments: Vec<usize> = f.comments.iter().map(|&c| c as usize).collect();
        comments.sort_unstable();
        Sse {
            bytes: Vec::with_capacity(len + comments.len() * (KEEP_ALIVE.len() + 2)),
            ends: Vec::with_capacity(events),
            eol: f.line_end.as_bytes(),
            comments,
            next_comment: 0,
            multiline: f.multiline.to_vec(),
        }
    }

    /// The comments placed before event `k` (all that are left, for `usize::MAX`: the
    /// encoder puts a comment past the last event after it).
    fn comments_at(&mut self, k: usize) {
        while self.comments.get(self.next_comment).is_some_and(|&c| c <= k) {
            self.bytes.extend_from_slice(KEEP_ALIVE.as_bytes());
            put(&mut self.bytes, self.eol);
            self.next_comment += 1;
        }
    }

    fn multiline(&self, k: usize) -> bool {
        !self.multiline.is_empty() && self.multiline.contains(&(k as u32))
    }

    /// Event `k`, after the comments placed before it, and its end.
    fn event(&mut self, k: usize, e: &SseEvent) {
        self.comments_at(k);
        if self.multiline(k) {
            self.pretty(e.event.as_deref(), e.id.as_deref(), &e.data);
        } else {
            self.fields(e.event.as_deref(), e.id.as_deref(), &e.data);
        }
        self.ends.push(self.bytes.len());
    }

    /// An event whose data is pretty-printed, as [`toolcert_sse::encode`] frames it: its
    /// data re-indented when it is one JSON document, over as many `data:` lines.
    fn pretty(&mut self, name: Option<&str>, id: Option<&str>, data: &str) {
        match toolcert_sse::pretty_json(data) {
            Some(p) => self.fields(name, id, &p),
            None => self.fields(name, id, data),
        }
    }

    /// Event `k` named `name`, its data written by `write`: in place, as one `data:` line,
    /// when it has no line break and is not pretty-printed; else as [`Sse::event`] frames
    /// it. `json`: the data is JSON written through [`Payload`] (strings escaped), which
    /// has no raw line break to look for.
    pub fn event_with(&mut self, k: usize, name: Option<&str>, json: bool, write: impl FnOnce(&mut Payload)) {
        self.comments_at(k);
        if self.multiline(k) {
            let mut p = Payload::with_capacity(0);
            write(&mut p);
            self.pretty(name, None, &p.finish());
            self.ends.push(self.bytes.len());
            return;
        }
        let start = self.bytes.len();
        let crlf = self.eol.len() == 2;
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            self.bytes.extend_from_slice(b"event: ");
            field(&mut self.bytes, name);
            eol(&mut self.bytes, self.eol[0], crlf);
        }
        self.bytes.extend_from_slice(b"data: ");
        let at = self.bytes.len();
        let mut p = Payload(std::mem::take(&mut self.bytes));
        write(&mut p);
        self.bytes = p.0;
        debug_assert!(!json || memchr::memchr2(b'\r', b'\n', &self.bytes[at..]).is_none());
        if !json && memchr::memchr2(b'\r', b'\n', &self.bytes[at..]).is_some() {
            // A line break in the data: framed as the encoder frames it.
            let data = String::from_utf8(self.bytes[at..].to_vec()).expect("a payload is UTF-8");
            self.bytes.truncate(start);
            self.fields(name, None, &data);
        } else {
            eol(&mut self.bytes, self.eol[0], crlf);
            eol(&mut self.bytes, self.eol[0], crlf);
        }
        self.ends.push(self.bytes.len());
    }

    /// The bytes, with the comments after the last event, then (with `transport`'s tail)
    /// the first bytes of `next`, cut as `transport` says and counted by `upto` (the wire
    /// events' counts): [`render_sse_bytes`]'s bytes, cuts and counts.
    pub fn finish(mut self, upto: &[u32], transport: &Transport, next: Option<&SseEvent>) -> BytesStream {
        self.comments_at(usize::MAX);
        self.tail(transport, next);
        let cuts = resolve(&self.bytes, &transport.cuts);
        chunked(upto, self.bytes, &self.ends, cuts)
    }

    /// A connection dropped inside the next event: its first bytes, never its blank line.
    /// Counted as delivering nothing (`delivered_by` reads only the delivered events' ends).
    fn tail(&mut self, transport: &Transport, next: Option<&SseEvent>) {
        if let (Some(tail), Some(next)) = (transport.tail, next) {
            let start = self.bytes.len();
            self.fields(next.event.as_deref(), next.id.as_deref(), &next.data);
            let keep = tail_len(&self.bytes[start..], tail, self.eol.len());
            self.bytes.truncate(start + keep);
        }
    }

    /// An event's lines (its data as it is) and its blank line.
    fn fields(&mut self, name: Option<&str>, id: Option<&str>, data: &str) {
        let (b, crlf) = (&mut self.bytes, self.eol.len() == 2);
        let first = self.eol[0];
        let eol = |b: &mut Vec<u8>| eol(b, first, crlf);
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            b.extend_from_slice(b"event: ");
            field(b, name);
            eol(b);
        }
        if let Some(id) = id {
            b.extend_from_slice(b"id: ");
            field(b, id);
            eol(b);
        }
        let mut rest = data.as_bytes();
        loop {
            b.extend_from_slice(b"data: ");
            match find_eol(rest) {
                Some(i) => {
                    b.extend_from_slice(&rest[..i]);
                    eol(b);
                    let skip = if rest[i] == b'\r' && rest.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
                    rest = &rest[i + skip..];
                }
                None => {
                    b.extend_from_slice(rest);
                    eol(b);
                    break;
                }
            }
        }
        eol(b);
    }
}

/// A line end: CR, LF or CRLF (its first byte, then LF if it is two).
#[inline]
fn eol(b: &mut Vec<u8>, first: u8, crlf: bool) {
    b.push(first);
    if crlf {
        b.push(b'\n');
    }
}

/// A field's value, with line breaks (which SSE cannot carry there) as spaces.
fn field(b: &mut Vec<u8>, value: &str) {
    match find_eol(value.as_bytes()) {
        None => b.extend_from_slice(value.as_bytes()),
        Some(_) => b.extend(value.bytes().map(|c| if c == b'\r' || c == b'\n' { b' ' } else { c })),
    }
}

/// The first CR or LF: short runs (event names, small payloads) byte by byte, where
/// `memchr2`'s set-up costs more than the search.
#[inline]
fn find_eol(b: &[u8]) -> Option<usize> {
    if b.len() >= 32 {
        return memchr::memchr2(b'\r', b'\n', b);
    }
    b.iter().position(|&c| c == b'\r' || c == b'\n')
}

/// A few bytes copied inline (a `memcpy` call costs more than they do).
#[inline]
fn put(b: &mut Vec<u8>, s: &[u8]) {
    b.extend(s.iter().copied());
}

/// `bytes` (the encoding of a wire stream whose message `w` completes `upto[w]` neutral
/// events, `ends[w]` just past it, rising) cut at `cuts` (strictly inside, rising, as
/// [`resolve`] gives them), with the neutral events each chunk completes.
pub(crate) fn chunked(upto: &[u32], bytes: Vec<u8>, ends: &[usize], cuts: Vec<usize>) -> BytesStream {
    let chunks = Chunks::cut_inside(bytes, &cuts);
    let chunk_ends = chunks.ends();
    // Message by message: the chunks before the one its end falls in deliver what the
    // messages before it did (filled as a block), and that chunk at least what it does. As
    // `WireStream::delivered_by_count`: the count of the last message complete.
    let mut counts: Vec<u32> = Vec::with_capacity(chunk_ends.len());
    let (mut c, mut delivered) = (0, 0);
    for (w, &end) in ends.iter().enumerate() {
        while c < chunk_ends.len() && chunk_ends[c] < end {
            c += 1;
        }
        if c == chunk_ends.len() {
            break;
        }
        counts.resize(c, delivered);
        delivered = upto.get(w).or(upto.last()).copied().unwrap_or(0);
    }
    counts.resize(chunk_ends.len(), delivered);
    BytesStream { chunks, upto: counts, cuts }
}

/// Byte offsets strictly inside `bytes` (no empty chunk: some clients read an empty read as
/// the end of the stream), sorted and without repeats.
pub fn resolve(bytes: &[u8], cuts: &[Cut]) -> Vec<usize> {
    resolve_by(bytes.len(), cuts, |aim| places(bytes, aim))
}

/// [`resolve`] over a stream of `len` bytes whose aimed places `places` finds (each aim's
/// offsets, sorted, all strictly inside the stream), asked once per aim however many cuts
/// share it.
///
/// The offsets are a few single ones (each aimed cut's) and one arithmetic run per `Every`:
/// the singles are sorted (a handful), then merged into the run, or, with two runs or more,
/// set in a bit per byte and read back in order (no run is ever listed before it is merged).
pub(crate) fn resolve_by(
    len: usize,
    cuts: &[Cut],
    mut places: impl FnMut(CutAim) -> Vec<usize>,
) -> Vec<usize> {
    if len < 2 {
        return Vec::new();
    }
    // The places of the three aims that have any (`Anywhere` and `Every` have none).
    let mut found: [Option<Vec<usize>>; 3] = [None, None, None];
    let mut singles: Vec<usize> = Vec::with_capacity(cuts.len());
    // `(first, step)`: the offsets `first, first + step, ...` below `len` (`first < len`).
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for cut in cuts {
        let slot = match cut.aim {
            CutAim::Every => {
                let step = (cut.pick % 16 + 1) as usize;
                let from = (cut.pick as usize / 16) % len;
                // 0 is not strictly inside: a run from 0 starts one step on.
                let first = if from == 0 { step } else { from };
                if first < len {
                    runs.push((first, step));
                }
                continue;
            }
            CutAim::Anywhere => None,
            CutAim::InsideChar => Some(0),
            CutAim::InsideDataPrefix => Some(1),
            CutAim::BetweenCrLf => Some(2),
        };
        let at: &[usize] = match slot {
            Some(s) => found[s].get_or_insert_with(|| places(cut.aim)),
            None => &[],
        };
        if at.is_empty() {
            let o = cut.pick as usize % len;
            if o > 0 {
                singles.push(o);
            }
        } else {
            singles.push(at[cut.pick as usize % at.len()]);
        }
    }
    if singles.len() > 1 {
        singles.sort_unstable();
        singles.dedup();
    }
    let count = |&(first, step): &(usize, usize)| (len - first).div_ceil(step);
    match runs.as_slice() {
        [] => singles,
        [run] => {
            let (first, step) = *run;
            let n = count(run);
            if singles.is_empty() {
                return (0..n).map(|i| first + i * step).collect();
            }
            // The run's offsets up to each single (copied as a block), then the single unless
            // the run has it.
            let mut out = Vec::with_capacity(n + singles.len());
            let mut i = 0;
            for &x in &singles {
                let upto = if x < first { 0 } else { ((x - first) / step + 1).min(n) };
                if upto > i {
                    out.extend((i..upto).map(|i| first + i * step));
                    i = upto;
                }
                if out.last() != Some(&x) {
                    out.push(x);
                }
            }
            out.extend((i..n).map(|i| first + i * step));
            out
        }
        runs => {
            let mut bits = vec![0u64; len.div_ceil(64)];
            let mut n = singles.len();
            for run in runs {
                n += count(run);
                let (mut o, step) = *run;
                while o < len {
                    bits[o / 64] |= 1 << (o % 64);
                    o += step;
                }
            }
            for &o in &singles {
                bits[o / 64] |= 1 << (o % 64);
            }
            let mut out = Vec::with_capacity(n.min(len));
            for (w, &word) in bits.iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    out.push(w * 64 + word.trailing_zeros() as usize);
                    word &= word - 1;
                }
            }
            out
        }
    }
}

/// Offsets of the places a cut can aim at.
fn places(bytes: &[u8], aim: CutAim) -> Vec<usize> {
    match aim {
        CutAim::Anywhere | CutAim::Every => Vec::new(),
        CutAim::InsideChar => inside_char(bytes),
        CutAim::InsideDataPrefix => {
            let mut out = Vec::new();
            for at in DATA.find_iter(bytes) {
                let end = (at + 6).min(bytes.len());
                out.extend(at + 1..end);
            }
            out
        }
        CutAim::BetweenCrLf => {
            memchr::memchr_iter(b'\n', bytes).filter(|&i| i > 0 && bytes[i - 1] == b'\r').collect()
        }
    }
}

/// `data:`, whose searcher is built once.
static DATA: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"data:"));

/// Every offset past 0 where a continuation byte starts (inside a character), eight bytes
/// at a time: a byte `10xxxxxx` has its top bit set and the next one clear. Mostly ASCII:
/// 32 bytes with no top bit are skipped at once.
pub(crate) fn inside_char(bytes: &[u8]) -> Vec<usize> {
    const HI: u64 = 0x8080_8080_8080_8080;
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("eight bytes"));
    let mut out = Vec::new();
    let (blocks, rest) = bytes.as_chunks::<32>();
    for (c, block) in blocks.iter().enumerate() {
        let w = [word(&block[..8]), word(&block[8..16]), word(&block[16..24]), word(&block[24..])];
        if (w[0] | w[1] | w[2] | w[3]) & HI != 0 {
            for (k, w) in w.into_iter().enumerate() {
                // Bit 6 of each byte shifted onto its bit 7: set where bit 6 was.
                let mut m = w & !(w << 1) & HI;
                while m != 0 {
                    out.push(c * 32 + k * 8 + (m.trailing_zeros() / 8) as usize);
                    m &= m - 1;
                }
            }
        }
    }
    let at = blocks.len() * 32;
    for (i, &b) in rest.iter().enumerate() {
        if b & 0xC0 == 0x80 {
            out.push(at + i);
        }
    }
    if out.first() == Some(&0) {
        out.remove(0);
    }
    out
}

/// How many bytes of one encoded event `tail` keeps: at least one, and never the final
/// blank line's line end (whose first byte, even a lone `\r`, would dispatch the event).
pub fn tail_len(event: &[u8], tail: Tail, eol: usize) -> usize {
    let max = event.len().saturating_sub(eol);
    if max == 0 {
        return 0;
    }
    let pick = tail.pick as usize;
    let places: Vec<usize> = match tail.aim {
        TailAim::BeforeBlankLine => vec![max],
        TailAim::MidLine => (1..max).filter(|&i| !matches!(event[i - 1], b'\n' | b'\r')).collect(),
        TailAim::InsideDataPrefix => memchr_all(event, b"data:")
            .into_iter()
            .flat_map(|at| at + 1..=at + 5)
            .filter(|&o| o < max)
            .collect(),
        TailAim::BetweenCrLf => (1..max).filter(|&i| event[i - 1] == b'\r' && event[i] == b'\n').collect(),
    };
    if places.is_empty() {
        return 1 + pick % max;
    }
    places[pick % places.len()]
}

/// Every offset where `needle` starts in `hay`. (`memmem` finds matches that do not overlap;
/// the needles here, `data:`, cannot overlap themselves, so that is every match.)
fn memchr_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    memchr::memmem::find_iter(hay, needle).collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use toolcert_sse::encode;

    /// The bytes level as it was before its encoder was its own: the wire stream through
    /// [`toolcert_sse::encode`], the tail encoded apart, the cuts sorted, each chunk's count
    /// looked up (the oracle of the tests).
    pub(crate) fn render_sse_bytes_before(wire: &WireStream, transport: &Transport) -> BytesStream {
        let events: Vec<&SseEvent> = wire.events.iter().filter_map(WireMessage::as_sse).collect();
        let mut encoded = encode(&events, &framing(transport));
        if let (Some(tail), Some(next)) = (transport.tail, wire.next.as_ref().and_then(WireMessage::as_sse)) {
            let f = framing(transport);
            let next = encode(std::slice::from_ref(next), &Framing { comments: &[], multiline: &[], ..f });
            let keep = tail_len(&next.bytes, tail, crate::line_end(transport.line_end).as_bytes().len());
            encoded.bytes.extend_from_slice(&next.bytes[..keep]);
        }
        let cuts = resolve_by_sorting(&encoded.bytes, &transport.cuts);
        let chunks = Chunks::cut(encoded.bytes, cuts.iter().copied());
        let upto = chunks
            .ends()
            .iter()
            .map(|&end| wire.delivered_by_count(encoded.ends.partition_point(|&e| e <= end)))
            .collect();
        BytesStream { chunks, upto, cuts }
    }

    /// `chunked` as it was (the oracle): every chunk end compared with the next message's.
    /// `bytes` (the encoding of a wire stream whose message `w` completes `upto[w]` neutral
    /// events, `ends[w]` just past it) cut at `cuts` (sorted), with the neutral events each
    /// chunk completes.
    pub(crate) fn chunked_before(
        upto: &[u32],
        bytes: Vec<u8>,
        ends: &[usize],
        cuts: Vec<usize>,
    ) -> BytesStream {
        let chunks = Chunks::cut(bytes, cuts.iter().copied());
        // The chunk ends only grow: the messages they complete are counted in one walk (most
        // chunks of a stream cut every few bytes complete none).
        let (mut done, mut delivered) = (0, 0);
        let mut counts = Vec::with_capacity(chunks.len());
        for &end in chunks.ends() {
            if ends.get(done).is_some_and(|&e| e <= end) {
                while ends.get(done).is_some_and(|&e| e <= end) {
                    done += 1;
                }
                // As `WireStream::delivered_by_count`: the count of the last message complete.
                delivered = upto.get(done - 1).or(upto.last()).copied().unwrap_or(0);
            }
            counts.push(delivered);
        }
        BytesStream { chunks, upto: counts, cuts }
    }

    /// `resolve` as it was before its offsets were merged run by run: every offset pushed,
    /// sorted in a bitmap or by a stable sort (the oracle of [`resolve_by`]).
    pub(crate) fn resolve_before(bytes: &[u8], cuts: &[Cut]) -> Vec<usize> {
        let len = bytes.len();
        let mut out = Vec::new();
        if len < 2 {
            return out;
        }
        // The places of each aim, found once however many cuts share the aim.
        let mut found: Vec<(CutAim, Vec<usize>)> = Vec::new();
        for cut in cuts {
            let at = match found.iter().position(|(aim, _)| *aim == cut.aim) {
                Some(at) => at,
                None => {
                    found.push((cut.aim, places_before(bytes, cut.aim)));
                    found.len() - 1
                }
            };
            let places = &found[at].1;
            // Every offset is below `len`, and 0 (not strictly inside) is never pushed: the
            // places of an aim are all past 0.
            match cut.aim {
                CutAim::Every => {
                    let step = (cut.pick % 16 + 1) as usize;
                    let from = (cut.pick as usize / 16) % len;
                    let first = if from == 0 { step } else { from };
                    out.extend((first..len).step_by(step));
                }
                _ if places.is_empty() => {
                    let o = cut.pick as usize % len;
                    if o > 0 {
                        out.push(o);
                    }
                }
                _ => out.push(places[cut.pick as usize % places.len()]),
            }
        }
        // Often sorted already (one cut, or one run of `Every`): checking is a pass, sorting more.
        // Otherwise it is a few sorted runs (each `Every` is one) and single offsets: when they
        // are dense (a run of `Every` cuts every few bytes), a bit per byte sorts and dedups them
        // in one pass over the words; else the stable sort merges the runs it finds, where the
        // unstable one partitions thousands of offsets.
        // One cut: one offset, or one sorted run.
        if cuts.len() == 1 {
            return out;
        }
        if out.is_sorted() {
            out.dedup();
        } else if out.len() >= len / 64 {
            let mut bits = vec![0u64; len.div_ceil(64)];
            for &o in &out {
                bits[o / 64] |= 1 << (o % 64);
            }
            out.clear();
            for (w, &word) in bits.iter().enumerate() {
                let mut word = word;
                while word != 0 {
                    out.push(w * 64 + word.trailing_zeros() as usize);
                    word &= word - 1;
                }
            }
        } else {
            out.sort();
            out.dedup();
        }
        out
    }

    /// `places` as it was: a byte at a time, `data:` found by a searcher built each time.
    fn places_before(bytes: &[u8], aim: CutAim) -> Vec<usize> {
        match aim {
            CutAim::Anywhere | CutAim::Every => Vec::new(),
            // A continuation byte starts inside a character.
            CutAim::InsideChar => {
                // Mostly ASCII: skip a block of 32 bytes with no high bit at once.
                let mut out = Vec::new();
                for (c, block) in bytes.chunks(32).enumerate() {
                    if block.iter().fold(0, |a, &b| a | b) < 0x80 {
                        continue;
                    }
                    let at = c * 32;
                    out.extend((at.max(1)..at + block.len()).filter(|&i| bytes[i] & 0xC0 == 0x80));
                }
                out
            }
            CutAim::InsideDataPrefix => memchr_all(bytes, b"data:")
                .into_iter()
                .flat_map(|at| (at + 1..=at + 5).filter(|&o| o < bytes.len()))
                .collect(),
            CutAim::BetweenCrLf => {
                memchr::memchr_iter(b'\n', bytes).filter(|&i| i > 0 && bytes[i - 1] == b'\r').collect()
            }
        }
    }

    fn cut(aim: CutAim, pick: u32) -> Cut {
        Cut { aim, pick }
    }

    #[test]
    fn aimed_cuts_land_where_they_aim() {
        let bytes = "data: {\"a\":\"é\"}\r\n\r\n".as_bytes();
        let inside = resolve(bytes, &[cut(CutAim::InsideChar, 0)]);
        assert_eq!(inside.len(), 1);
        assert!(std::str::from_utf8(&bytes[..inside[0]]).is_err(), "the cut splits é");
        let crlf = resolve(bytes, &[cut(CutAim::BetweenCrLf, 1)])[0];
        assert_eq!(&bytes[crlf - 1..=crlf], b"\r\n");
        let data = resolve(bytes, &[cut(CutAim::InsideDataPrefix, 2)])[0];
        assert!((1..=5).contains(&data));
        assert!(resolve(bytes, &[cut(CutAim::Every, 0)]).len() >= bytes.len() - 2);
    }

    #[test]
    fn tails_stop_where_they_aim_and_never_dispatch() {
        let ev = b"event: message_delta\r\ndata: {\"a\":1}\r\n\r\n";
        let t = |aim, pick| tail_len(ev, Tail { aim, pick }, 2);
        assert_eq!(&ev[..t(TailAim::BeforeBlankLine, 0)], b"event: message_delta\r\ndata: {\"a\":1}\r\n");
        let crlf = t(TailAim::BetweenCrLf, 1);
        assert!(ev[..crlf].ends_with(b"{\"a\":1}\r"), "{crlf}");
        let data = t(TailAim::InsideDataPrefix, 0);
        assert_eq!(&ev[..data], b"event: message_delta\r\nd");
        for pick in 0..64 {
            let mid = t(TailAim::MidLine, pick);
            assert!(!matches!(ev[mid - 1], b'\n' | b'\r'));
            for aim in TailAim::ALL {
                let n = t(aim, pick);
                // Never the final blank line: decoding the tail dispatches nothing.
                let mut d = toolcert_sse::Decoder::new();
                let mut out = Vec::new();
                let _ = d.feed(&ev[..n], &mut out);
                assert!(out.is_empty(), "{aim:?} {pick}: {n}");
            }
        }
    }

    #[test]
    fn no_cut_makes_an_empty_chunk() {
        let bytes = b"data: x\n\n";
        let cuts =
            resolve(bytes, &[cut(CutAim::Anywhere, 0), cut(CutAim::Anywhere, 9), cut(CutAim::Anywhere, 3)]);
        assert_eq!(cuts, [3]);
    }

    /// `resolve` as it was before its offsets were sorted through a bitmap: every offset
    /// pushed, then filtered, sorted and deduplicated.
    fn resolve_by_sorting(bytes: &[u8], cuts: &[Cut]) -> Vec<usize> {
        let len = bytes.len();
        if len < 2 {
            return Vec::new();
        }
        let mut out = Vec::new();
        for cut in cuts {
            let places = places(bytes, cut.aim);
            match cut.aim {
                CutAim::Every => {
                    let step = (cut.pick % 16 + 1) as usize;
                    let from = (cut.pick as usize / 16) % len;
                    out.extend((from..len).step_by(step));
                }
                _ if places.is_empty() => out.push(cut.pick as usize % len),
                _ => out.push(places[cut.pick as usize % places.len()]),
            }
        }
        out.retain(|&o| o > 0 && o < len);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every cut aim, for the mixes the resolving tests draw.
    const AIMS: [CutAim; 5] =
        [CutAim::Anywhere, CutAim::Every, CutAim::InsideChar, CutAim::InsideDataPrefix, CutAim::BetweenCrLf];

    /// Thousands of mixes of aims, picks and stream lengths (short, long, ASCII and not, CRLF
    /// and not) resolve to the offsets the sorting version gives.
    #[test]
    fn resolving_agrees_with_sorting_every_offset() {
        let unit = "data: {\"a\":\"é✈\"}\r\n\r\nevent: x\ndata: y\n\n";
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..4000 {
            let reps = [0, 1, 2, 5, 40][round % 5];
            let text = unit.repeat(reps);
            let bytes = &text.as_bytes()[..text.len().saturating_sub(round % 7)];
            let cuts: Vec<Cut> =
                (0..next() % 6).map(|_| cut(AIMS[(next() % 5) as usize], (next() % 2000) as u32)).collect();
            assert_eq!(
                resolve(bytes, &cuts),
                resolve_by_sorting(bytes, &cuts),
                "{cuts:?} over {}",
                bytes.len()
            );
        }
    }

    /// A small xorshift, for the adversarial inputs below.
    fn rng(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// The run-merging `resolve` gives the offsets the former one gave, over mixes of every
    /// aim (several `Every` runs among them, repeated aims, picks past the stream's length)
    /// on streams of random bytes (high bits, CR and LF, `data:` planted), short and long.
    #[test]
    fn resolving_agrees_with_the_former_resolve() {
        let mut next = rng(0x2545_F491_4F6C_DD1D);
        let pieces: [&[u8]; 8] =
            [b"data:", b"\r\n", b"\r", b"\n", "é".as_bytes(), "✈".as_bytes(), b"dat", b"x"];
        let (mut multi_run, mut merged) = (0, 0);
        for round in 0..6000 {
            let mut bytes = Vec::new();
            let n = [0, 1, 2, 3, 31, 32, 33, 64, 200, 3000][round % 10];
            while bytes.len() < n {
                match next() % 4 {
                    0 => bytes.push(next() as u8),
                    _ => bytes.extend_from_slice(pieces[(next() % 8) as usize]),
                }
            }
            let cuts: Vec<Cut> = (0..next() % 7)
                .map(|_| {
                    let aim = AIMS[(next() % 5) as usize];
                    cut(aim, (next() % [50, 2000, 70000][(next() % 3) as usize]) as u32)
                })
                .collect();
            let runs = cuts.iter().filter(|c| c.aim == CutAim::Every).count();
            multi_run += usize::from(runs > 1);
            merged += usize::from(runs == 1 && cuts.len() > 1);
            assert_eq!(resolve(&bytes, &cuts), resolve_before(&bytes, &cuts), "{cuts:?} over {bytes:?}");
            assert_eq!(resolve(&bytes, &cuts), resolve_by_sorting(&bytes, &cuts), "{cuts:?} over {bytes:?}");
        }
        assert!(multi_run > 100 && merged > 100, "{multi_run} {merged}");
    }

    /// The continuation bytes found a word at a time are the ones found a byte at a time, at
    /// every length and alignment, whatever the bytes.
    #[test]
    fn inside_char_finds_every_continuation_byte() {
        let mut next = rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..3000 {
            let n = round % 150;
            let bytes: Vec<u8> = (0..n)
                .map(|_| match next() % 3 {
                    0 => next() as u8,
                    1 => 0x80 | (next() as u8 & 0x3F),
                    _ => b'a',
                })
                .collect();
            let want: Vec<usize> = (1..n).filter(|&i| bytes[i] & 0xC0 == 0x80).collect();
            assert_eq!(inside_char(&bytes), want, "{bytes:?}");
            assert_eq!(places_before(&bytes, CutAim::InsideChar), want);
        }
    }

    /// Chunks and their counts are the former walk's, over random streams, message ends
    /// (some past the bytes, as a damaged Bedrock message's), counts and cuts of every aim.
    #[test]
    fn chunks_are_counted_as_before() {
        let aims = [CutAim::Anywhere, CutAim::Every, CutAim::InsideChar, CutAim::InsideDataPrefix];
        let mut next = rng(0xD1B5_4A32_D192_ED03);
        for round in 0..4000 {
            let len = [0, 1, 2, 9, 64, 500][round % 6] + (next() % 3) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let messages = (next() % 12) as usize;
            let mut ends: Vec<usize> = (0..messages).map(|_| (next() as usize) % (len + 2)).collect();
            ends.sort_unstable();
            if next().is_multiple_of(4) {
                let from = ends.len() / 2;
                ends[from..].fill(usize::MAX);
            }
            let mut upto: Vec<u32> =
                (0..messages.saturating_sub((next() % 2) as usize)).map(|_| (next() % 9) as u32).collect();
            upto.sort_unstable();
            let cuts: Vec<Cut> =
                (0..next() % 4).map(|_| cut(aims[(next() % 4) as usize], (next() % 3000) as u32)).collect();
            let cuts = resolve(&bytes, &cuts);
            assert_eq!(
                chunked(&upto, bytes.clone(), &ends, cuts.clone()),
                chunked_before(&upto, bytes, &ends, cuts),
                "{ends:?} {upto:?}"
            );
        }
    }

    /// Many unsorted offsets (two runs of `Every` and aimed cuts) come out as a sort and a
    /// dedup would give them.
    #[test]
    fn many_cuts_are_sorted_and_unique() {
        let bytes = "data: {\"a\":\"é\"}\r\n\r\n".repeat(40);
        let bytes = bytes.as_bytes();
        for picks in [[0u32, 7, 33], [5, 16, 250], [31, 2, 999]] {
            let cuts = [
                cut(CutAim::Every, picks[0]),
                cut(CutAim::InsideChar, picks[1]),
                cut(CutAim::Every, picks[2]),
                cut(CutAim::Anywhere, picks[1] * 13),
            ];
            let got = resolve(bytes, &cuts);
            assert!(got.len() > 64, "{}", got.len());
            let mut want: Vec<usize> = Vec::new();
            for c in &cuts {
                want.extend(resolve(bytes, std::slice::from_ref(c)));
            }
            want.sort_unstable();
            want.dedup();
            assert_eq!(got, want, "{picks:?}");
        }
    }
}
