//! The AWS event stream framing (`application/vnd.amazon.eventstream`), with no knowledge of
//! any service: the byte layer under Bedrock's ConverseStream, as `toolcert-sse` is under the
//! SSE dialects.
//!
//! Where it sits in the data flow: wire (Bedrock messages) → **bytes (event stream
//! messages cut into transport chunks)** → subject. [`encode`] frames one [`Message`];
//! the [`Decoder`] is the first layer of the reference stack for a binary dialect: it takes
//! transport chunks cut anywhere (inside the prelude, the headers, the payload or a CRC) and
//! gives back whole messages, refusing a message whose checksum or lengths are wrong.
//!
//! A message is:
//!
//! ```text
//! prelude:  total length (u32 BE) | headers length (u32 BE) | prelude CRC32 (u32 BE, of the 8 bytes before)
//! headers:  name length (u8) | name (UTF-8) | value type (u8) | value   ... (headers length bytes)
//! payload:  total length - headers length - 16 bytes
//! message CRC32 (u32 BE, of every byte before it)
//! ```
//!
//! The decoder checks the prelude CRC before it trusts either length, bounds a message at
//! [`MAX_MESSAGE`] bytes (so memory stays bounded whatever a length says), and once it has
//! refused a message refuses everything after it: the stream cannot be resynchronised.
//! Chunk invariance holds by construction (it only acts on whole preludes and whole
//! messages) and is tested: any chunking gives the same messages and the same error.

use std::fmt;

/// The prelude: total length, headers length, prelude CRC.
pub const PRELUDE: usize = 12;
/// The smallest message: a prelude and a message CRC, no headers, no payload.
pub const MIN_MESSAGE: usize = PRELUDE + 4;
/// The largest message the decoder accepts (the AWS SDKs' limit): 16 MiB.
pub const MAX_MESSAGE: usize = 16 << 20;
/// The most header bytes one message may have (the AWS SDKs' limit): 128 KiB.
pub const MAX_HEADERS: usize = 128 << 10;

/// One header value. The event stream format has nine types; the dialects here use strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HeaderValue {
    Bool(bool),
    Byte(i8),
    Short(i16),
    Int(i32),
    Long(i64),
    Bytes(Vec<u8>),
    String(String),
    /// Milliseconds since the epoch.
    Timestamp(i64),
    Uuid([u8; 16]),
}

/// One message: its headers in order, and its payload.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    pub headers: Vec<(String, HeaderValue)>,
    pub payload: Vec<u8>,
}

impl Message {
    /// The value of the string header `name`, if the message has one.
    pub fn string(&self, name: &str) -> Option<&str> {
        self.headers.iter().find_map(|(n, v)| match v {
            HeaderValue::String(s) if n == name => Some(s.as_str()),
            _ => None,
        })
    }
}

/// Why a byte stream is not a sequence of event stream messages. Each says which message
/// (by its number from 0) and what in it was wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("message {message}: prelude CRC {got:#010x}, but the prelude's bytes give {want:#010x}")]
    PreludeCrc { message: usize, got: u32, want: u32 },
    #[error("message {message}: message CRC {got:#010x}, but the message's bytes give {want:#010x}")]
    MessageCrc { message: usize, got: u32, want: u32 },
    #[error("message {message}: total length {total} is {why}")]
    Length { message: usize, total: usize, why: &'static str },
    #[error("message {message}: headers length {headers} does not fit in a message of {total} bytes")]
    HeadersLength { message: usize, headers: usize, total: usize },
    #[error("message {message}: header {at}: {why}")]
    Header { message: usize, at: usize, why: String },
}

/// The CRC32 (IEEE, as zlib) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// The bytes of one message.
pub fn encode(message: &Message) -> Vec<u8> {
    let mut headers = Vec::new();
    for (name, value) in &message.headers {
        // Names are at most 255 bytes: the format's length is one byte.
        let name = &name.as_bytes()[..name.len().min(255)];
        headers.push(name.len() as u8);
        headers.extend_from_slice(name);
        let short = |out: &mut Vec<u8>, b: &[u8]| {
            let b = &b[..b.len().min(u16::MAX as usize)];
            out.extend_from_slice(&(b.len() as u16).to_be_bytes());
            out.extend_from_slice(b);
        };
        match value {
            HeaderValue::Bool(true) => headers.push(0),
            HeaderValue::Bool(false) => headers.push(1),
            HeaderValue::Byte(b) => headers.extend([2, *b as u8]),
            HeaderValue::Short(v) => {
                headers.push(3);
                headers.extend_from_slice(&v.to_be_bytes());
            }
            HeaderValue::Int(v) => {
                headers.push(4);
                headers.extend_from_slice(&v.to_be_bytes());
            }
            HeaderValue::Long(v) => {
                headers.push(5);
                headers.extend_from_slice(&v.to_be_bytes());
            }
            HeaderValue::Bytes(b) => {
                headers.push(6);
                short(&mut headers, b);
            }
            HeaderValue::String(s) => {
                headers.push(7);
                short(&mut headers, s.as_bytes());
            }
            HeaderValue::Timestamp(v) => {
                headers.push(8);
                headers.extend_from_slice(&v.to_be_bytes());
            }
            HeaderValue::Uuid(u) => {
                headers.push(9);
                headers.extend_from_slice(u);
            }
        }
    }
    let total = MIN_MESSAGE + headers.len() + message.payload.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&headers);
    out.extend_from_slice(&message.payload);
    let crc = crc32(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Appends the bytes of one message whose headers are all strings, as [`encode`] writes
/// that message: straight into `out`, with no header value copied into a [`Message`] first.
pub fn encode_strings_into<N: AsRef<str>, V: AsRef<str>>(
    out: &mut Vec<u8>,
    headers: &[(N, V)],
    payload: &[u8],
) {
    // As `encode`: a name is cut at 255 bytes, a value at `u16::MAX`.
    fn name(n: &str) -> &[u8] {
        &n.as_bytes()[..n.len().min(255)]
    }
    fn value(v: &str) -> &[u8] {
        &v.as_bytes()[..v.len().min(u16::MAX as usize)]
    }
    let headers_len: usize =
        headers.iter().map(|(n, v)| 4 + name(n.as_ref()).len() + value(v.as_ref()).len()).sum();
    let total = MIN_MESSAGE + headers_len + payload.len();
    out.reserve(total);
    let start = out.len();
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(headers_len as u32).to_be_bytes());
    let prelude_crc = crc32(&out[start..]);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    for (n, v) in headers {
        let (n, v) = (name(n.as_ref()), value(v.as_ref()));
        out.push(n.len() as u8);
        out.extend_from_slice(n);
        out.push(7);
        out.extend_from_slice(&(v.len() as u16).to_be_bytes());
        out.extend_from_slice(v);
    }
    out.extend_from_slice(payload);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// An incremental decoder: feed it transport chunks as they arrive.
#[derive(Clone, Debug, Default)]
pub struct Decoder {
    /// Bytes of the message being received (never more than one message's worth).
    buf: Vec<u8>,
    /// Messages decoded so far, to name the one at fault.
    count: usize,
    /// Once refused, the stream stays refused.
    failed: Option<FramingError>,
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Decodes `chunk`, appending every message it completes to `out`. Messages completed
    /// before a framing error are still appended; after one, every call returns it again.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<Message>) -> Result<(), FramingError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        while !chunk.is_empty() {
            // Take what the current message still needs, never more: the rest is the next's.
            let need = match self.expected_len() {
                Ok(Some(total)) => total,
                Ok(None) => PRELUDE,
                Err(e) => return Err(self.fail(e)),
            };
            let take = need.saturating_sub(self.buf.len()).min(chunk.len());
            self.buf.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            match self.expected_len() {
                Err(e) => return Err(self.fail(e)),
                Ok(Some(total)) if self.buf.len() == total => {
                    let message = parse(&self.buf, self.count).map_err(|e| self.fail(e))?;
                    out.push(message);
                    self.count += 1;
                    self.buf.clear();
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether the stream ended between messages. A message cut off by the end of the stream
    /// is not an error of the framing (the connection ended, the bytes were fine): the caller
    /// decides what an early end means.
    pub fn in_message(&self) -> usize {
        self.buf.len()
    }

    /// The total length of the message being received, once its prelude is in and checked.
    fn expected_len(&self) -> Result<Option<usize>, FramingError> {
        if self.buf.len() < PRELUDE {
            return Ok(None);
        }
        prelude(&self.buf[..PRELUDE], self.count).map(|(total, _)| Some(total))
    }

    fn fail(&mut self, e: FramingError) -> FramingError {
        self.buf = Vec::new();
        self.failed = Some(e.clone());
        e
    }
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// The checked prelude: total and headers lengths.
fn prelude(p: &[u8], message: usize) -> Result<(usize, usize), FramingError> {
    let (got, want) = (be32(&p[8..12]), crc32(&p[..8]));
    if got != want {
        return Err(FramingError::PreludeCrc { message, got, want });
    }
    let (total, headers) = (be32(&p[..4]) as usize, be32(&p[4..8]) as usize);
    if total < MIN_MESSAGE {
        return Err(FramingError::Length { message, total, why: "shorter than a prelude and a CRC" });
    }
    if total > MAX_MESSAGE {
        return Err(FramingError::Length { message, total, why: "over the 16 MiB a message may have" });
    }
    if headers > total - MIN_MESSAGE || headers > MAX_HEADERS {
        return Err(FramingError::HeadersLength { message, headers, total });
    }
    Ok((total, headers))
}

/// One whole message's bytes, prelude already checked.
fn parse(bytes: &[u8], message: usize) -> Result<Message, FramingError> {
    let (total, headers_len) = prelude(&bytes[..PRELUDE], message)?;
    debug_assert_eq!(bytes.len(), total);
    let (got, want) = (be32(&bytes[total - 4..]), crc32(&bytes[..total - 4]));
    if got != want {
        return Err(FramingError::MessageCrc { message, got, want });
    }
    let headers = headers(&bytes[PRELUDE..PRELUDE + headers_len], message)?;
    Ok(Message { headers, payload: bytes[PRELUDE + headers_len..total - 4].to_vec() })
}

/// Reads the header bytes of one message.
struct Cursor<'a> {
    b: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.b.len() < n {
            return None;
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Some(head)
    }

    /// A big-endian signed integer of `n` bytes.
    fn int(&mut self, n: usize) -> Option<i64> {
        let v = self.take(n)?;
        let mut a = if v[0] & 0x80 != 0 { [0xFFu8; 8] } else { [0u8; 8] };
        a[8 - n..].copy_from_slice(v);
        Some(i64::from_be_bytes(a))
    }
}

fn headers(b: &[u8], message: usize) -> Result<Vec<(String, HeaderValue)>, FramingError> {
    let mut out = Vec::new();
    let mut c = Cursor { b };
    while !c.b.is_empty() {
        let at = out.len();
        let bad = |why: String| FramingError::Header { message, at, why };
        let short = |what: &str| bad(format!("the headers end inside its {what}"));
        let n = c.take(1).ok_or_else(|| short("name length"))?[0] as usize;
        let name = std::str::from_utf8(c.take(n).ok_or_else(|| short("name"))?)
            .map_err(|_| bad("its name is not UTF-8".into()))?
            .to_owned();
        let ty = c.take(1).ok_or_else(|| short("value type"))?[0];
        let value = match ty {
            0 => HeaderValue::Bool(true),
            1 => HeaderValue::Bool(false),
            2 => HeaderValue::Byte(c.int(1).ok_or_else(|| short("value"))? as i8),
            3 => HeaderValue::Short(c.int(2).ok_or_else(|| short("value"))? as i16),
            4 => HeaderValue::Int(c.int(4).ok_or_else(|| short("value"))? as i32),
            5 => HeaderValue::Long(c.int(8).ok_or_else(|| short("value"))?),
            6 | 7 => {
                let len = c.take(2).ok_or_else(|| short("value length"))?;
                let len = u16::from_be_bytes([len[0], len[1]]) as usize;
                let v = c.take(len).ok_or_else(|| short("value"))?.to_vec();
                if ty == 6 {
                    HeaderValue::Bytes(v)
                } else {
                    HeaderValue::String(
                        String::from_utf8(v).map_err(|_| bad(format!("`{name}`'s string is not UTF-8")))?,
                    )
                }
            }
            8 => HeaderValue::Timestamp(c.int(8).ok_or_else(|| short("value"))?),
            9 => {
                let mut u = [0u8; 16];
                u.copy_from_slice(c.take(16).ok_or_else(|| short("value"))?);
                HeaderValue::Uuid(u)
            }
            t => return Err(bad(format!("`{name}` has value type {t}, which the format does not define"))),
        };
        out.push((name, value));
    }
    Ok(out)
}

impl fmt::Display for HeaderValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderValue::String(s) => f.write_str(s),
            other => write!(f, "{other:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message of string headers written straight into a buffer is the bytes `encode`
    /// gives it, after whatever the buffer held: names past 255 bytes and values past
    /// `u16::MAX` cut as it cuts them, empty and non-ASCII ones, no headers at all.
    #[test]
    fn string_headers_written_in_place_are_encode_s_bytes() {
        let long_name = "n".repeat(300);
        let long_value = "v".repeat(70_000);
        type Headers = Vec<(String, String)>;
        let cases: Vec<(Headers, Vec<u8>)> = vec![
            (vec![], vec![]),
            (vec![(":event-type".into(), "messageStart".into())], b"{}".to_vec()),
            (
                vec![
                    (":event-type".into(), "contentBlockDelta".into()),
                    (":content-type".into(), "application/json".into()),
                    (":message-type".into(), "event".into()),
                ],
                "{\"é✈\":1}".as_bytes().to_vec(),
            ),
            (vec![(String::new(), String::new()), ("é".into(), "✈".into())], vec![0, 255, 7]),
            (vec![(long_name.clone(), long_value.clone())], vec![b'x'; 1000]),
            (vec![("a".into(), long_value), (long_name, "b".into())], Vec::new()),
        ];
        for (headers, payload) in cases {
            let message = Message {
                headers: headers.iter().map(|(n, v)| (n.clone(), HeaderValue::String(v.clone()))).collect(),
                payload: payload.clone(),
            };
            let mut out = b"before".to_vec();
            encode_strings_into(&mut out, &headers, &payload);
            assert_eq!(&out[..6], b"before");
            assert_eq!(
                out[6..],
                encode(&message)[..],
                "{:?}",
                headers.iter().map(|(n, v)| (n.len(), v.len())).collect::<Vec<_>>()
            );
        }
    }

    fn msg(event: &str, payload: &str) -> Message {
        Message {
            headers: vec![
                (":event-type".into(), HeaderValue::String(event.into())),
                (":content-type".into(), HeaderValue::String("application/json".into())),
                (":message-type".into(), HeaderValue::String("event".into())),
            ],
            payload: payload.as_bytes().to_vec(),
        }
    }

    fn stream() -> (Vec<Message>, Vec<u8>) {
        let messages = vec![
            msg("messageStart", r#"{"role":"assistant"}"#),
            msg("contentBlockDelta", r#"{"contentBlockIndex":0,"delta":{"text":"Mérida"}}"#),
            Message { headers: Vec::new(), payload: Vec::new() },
            Message {
                headers: vec![
                    ("b".into(), HeaderValue::Bool(false)),
                    ("y".into(), HeaderValue::Byte(-3)),
                    ("s".into(), HeaderValue::Short(-300)),
                    ("i".into(), HeaderValue::Int(70000)),
                    ("l".into(), HeaderValue::Long(-1)),
                    ("x".into(), HeaderValue::Bytes(vec![0, 255])),
                    ("t".into(), HeaderValue::Timestamp(1_700_000_000_000)),
                    ("u".into(), HeaderValue::Uuid([7; 16])),
                ],
                payload: b"{}".to_vec(),
            },
        ];
        let bytes = messages.iter().flat_map(encode).collect();
        (messages, bytes)
    }

    fn decode_in(bytes: &[u8], cuts: &[usize]) -> (Vec<Message>, Result<(), FramingError>) {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        let mut start = 0;
        for &end in cuts.iter().chain(std::iter::once(&bytes.len())) {
            if let Err(e) = d.feed(&bytes[start..end], &mut out) {
                return (out, Err(e));
            }
            start = end;
        }
        (out, Ok(()))
    }

    #[test]
    fn a_known_message_has_the_documented_layout() {
        // The prelude of a message with no headers and no payload: length 16, headers 0,
        // and the CRC32 of those eight bytes.
        let bytes = encode(&Message::default());
        assert_eq!(&bytes[..8], &[0, 0, 0, 16, 0, 0, 0, 0]);
        assert_eq!(be32(&bytes[8..12]), crc32(&[0, 0, 0, 16, 0, 0, 0, 0]));
        assert_eq!(be32(&bytes[12..]), crc32(&bytes[..12]));
        // CRC32 of "123456789" is the standard check value.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn every_cut_gives_the_same_messages() {
        let (messages, bytes) = stream();
        assert_eq!(decode_in(&bytes, &[]), (messages.clone(), Ok(())));
        for cut in 1..bytes.len() {
            assert_eq!(decode_in(&bytes, &[cut]), (messages.clone(), Ok(())), "cut at {cut}");
        }
        let every: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(decode_in(&bytes, &every), (messages, Ok(())));
    }

    #[test]
    fn a_flipped_bit_anywhere_is_refused_in_every_chunking() {
        let (messages, bytes) = stream();
        let first = encode(&messages[0]).len();
        for at in 0..first {
            for bit in [0x01u8, 0x80] {
                let mut bad = bytes.clone();
                bad[at] ^= bit;
                let whole = decode_in(&bad, &[]);
                assert!(whole.1.is_err(), "byte {at} bit {bit:#x} went unnoticed");
                assert!(whole.0.is_empty(), "byte {at}: a damaged message was handed on");
                for cut in [1, at.max(1), at + 1, first - 1] {
                    assert_eq!(decode_in(&bad, &[cut.min(bad.len() - 1)]), whole, "byte {at} cut {cut}");
                }
            }
        }
    }

    #[test]
    fn lengths_are_bounded_and_checked() {
        let with = |total: u32, headers: u32| {
            let mut p = Vec::new();
            p.extend_from_slice(&total.to_be_bytes());
            p.extend_from_slice(&headers.to_be_bytes());
            let crc = crc32(&p);
            p.extend_from_slice(&crc.to_be_bytes());
            decode_in(&p, &[]).1
        };
        assert!(matches!(with(15, 0), Err(FramingError::Length { .. })));
        assert!(matches!(with(u32::MAX, 0), Err(FramingError::Length { .. })));
        assert!(matches!(with(20, 5), Err(FramingError::HeadersLength { .. })));
        // A prelude that checks out waits for its message: nothing is allocated up front.
        assert_eq!(with(MAX_MESSAGE as u32, 0), Ok(()));
    }

    #[test]
    fn a_refused_stream_stays_refused() {
        let (_, mut bytes) = stream();
        bytes[9] ^= 1;
        let mut d = Decoder::new();
        let mut out = Vec::new();
        let e = d.feed(&bytes, &mut out).unwrap_err();
        assert!(matches!(e, FramingError::PreludeCrc { message: 0, .. }), "{e}");
        assert_eq!(d.feed(&encode(&Message::default()), &mut out), Err(e));
        assert!(out.is_empty());
    }

    #[test]
    fn headers_that_overrun_are_refused() {
        let mut m = Message::default();
        m.headers.push(("n".into(), HeaderValue::String("v".into())));
        let good = encode(&m);
        // Claim a longer string than the headers hold, and re-seal both CRCs.
        let mut bad = good.clone();
        bad[PRELUDE + 4] = 9;
        let n = bad.len();
        let crc = crc32(&bad[..n - 4]);
        bad[n - 4..].copy_from_slice(&crc.to_be_bytes());
        assert!(matches!(decode_in(&bad, &[]).1, Err(FramingError::Header { .. })));
    }
}
