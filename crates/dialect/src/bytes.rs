//! The bytes level: a wire stream encoded as SSE bytes and cut into transport chunks.
//!
//! Where it sits: scenario → events → wire → **bytes** → subject. The scenario's
//! [`Transport`] says the line end, comment lines, multi-line data and where the transport
//! cuts; cuts are aimed at kinds of place (inside a multi-byte character, inside `data:`,
//! between `\r` and `\n`) and resolved here against the actual bytes.

use toolcert_scenario::{Cut, CutAim, Transport};
use toolcert_sse::encode;

use crate::{framing, WireStream};

/// A stream as transport chunks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BytesStream {
    pub chunks: Vec<Vec<u8>>,
    /// `upto[c]`: neutral events delivered in full once chunks `0..=c` have arrived.
    pub upto: Vec<u32>,
    /// The cut offsets used, sorted.
    pub cuts: Vec<usize>,
}

/// Encodes `wire` as SSE bytes framed and cut as `transport` says.
pub fn render_bytes(wire: &WireStream, transport: &Transport) -> BytesStream {
    let encoded = encode(&wire.events, &framing(transport));
    let bytes = &encoded.bytes;
    let cuts = resolve(bytes, &transport.cuts);
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut upto = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for end in cuts.iter().copied().chain(std::iter::once(bytes.len())) {
        if end <= start {
            continue;
        }
        chunks.push(bytes[start..end].to_vec());
        upto.push(wire.delivered_by(&encoded.ends, end));
        start = end;
    }
    BytesStream { chunks, upto, cuts }
}

/// Byte offsets strictly inside `bytes` (no empty chunk: some clients read an empty read as
/// the end of the stream), sorted and without repeats.
pub fn resolve(bytes: &[u8], cuts: &[Cut]) -> Vec<usize> {
    let len = bytes.len();
    let mut out = Vec::new();
    if len < 2 {
        return out;
    }
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

/// Offsets of the places a cut can aim at.
fn places(bytes: &[u8], aim: CutAim) -> Vec<usize> {
    match aim {
        CutAim::Anywhere | CutAim::Every => Vec::new(),
        // A continuation byte starts inside a character.
        CutAim::InsideChar => (1..bytes.len()).filter(|&i| bytes[i] & 0xC0 == 0x80).collect(),
        CutAim::InsideDataPrefix => memchr_all(bytes, b"data:")
            .into_iter()
            .flat_map(|at| (at + 1..=at + 5).filter(|&o| o < bytes.len()))
            .collect(),
        CutAim::BetweenCrLf => {
            (1..bytes.len()).filter(|&i| bytes[i - 1] == b'\r' && bytes[i] == b'\n').collect()
        }
    }
}

fn memchr_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len()).enumerate().filter(|(_, w)| *w == needle).map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn no_cut_makes_an_empty_chunk() {
        let bytes = b"data: x\n\n";
        let cuts =
            resolve(bytes, &[cut(CutAim::Anywhere, 0), cut(CutAim::Anywhere, 9), cut(CutAim::Anywhere, 3)]);
        assert_eq!(cuts, [3]);
    }
}
