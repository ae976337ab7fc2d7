use super::*;

fn ev(event: Option<&str>, data: &str, id: Option<&str>) -> SseEvent {
    SseEvent { event: event.map(Into::into), data: data.into(), id: id.map(Into::into) }
}

/// Decodes `chunks` in order; returns what was dispatched and how it ended.
fn run(chunks: &[&[u8]], limit: usize) -> (Vec<SseEvent>, Result<(), SseError>) {
    let mut d = Decoder::with_limit(limit);
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = d.feed(c, &mut out) {
            return (out, Err(e));
        }
    }
    let r = d.finish(&mut out);
    (out, r)
}

fn whole(bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
    decode_all(bytes)
}

/// Every way of cutting `bytes` into two or three chunks gives the same as whole.
fn assert_invariant(bytes: &[u8], limit: usize) {
    let want = run(&[bytes], limit);
    for i in 0..=bytes.len() {
        assert_eq!(run(&[&bytes[..i], &bytes[i..]], limit), want, "cut at {i} of {bytes:?}");
        for j in i..=bytes.len() {
            assert_eq!(run(&[&bytes[..i], &bytes[i..j], &bytes[j..]], limit), want, "cuts {i},{j}");
        }
    }
    let singles: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(run(&singles, limit), want, "byte by byte");
}

#[test]
fn encodes_fields_in_order_with_each_line_end() {
    let events = [ev(Some("ping"), "{\"type\":\"ping\"}", Some("7")), ev(None, "a\nb", None)];
    let cases = [
        (LineEnd::Lf, "event: ping\nid: 7\ndata: {\"type\":\"ping\"}\n\ndata: a\ndata: b\n\n"),
        (
            LineEnd::CrLf,
            "event: ping\r\nid: 7\r\ndata: {\"type\":\"ping\"}\r\n\r\ndata: a\r\ndata: b\r\n\r\n",
        ),
        (LineEnd::Cr, "event: ping\rid: 7\rdata: {\"type\":\"ping\"}\r\rdata: a\rdata: b\r\r"),
    ];
    for (line_end, want) in cases {
        let enc = encode(&events, &Framing { line_end, ..Framing::default() });
        assert_eq!(String::from_utf8(enc.bytes.clone()).unwrap(), want);
        assert_eq!(*enc.ends.last().unwrap(), enc.bytes.len());
        let first = &enc.bytes[..enc.ends[0]];
        assert_eq!(whole(first).unwrap(), events[..1]);
        assert_eq!(whole(&enc.bytes).unwrap(), events);
    }
}

#[test]
fn comments_and_multiline_framing() {
    let events = [ev(Some("a"), r#"{"x":[1,{"y":"z"}]}"#, None), ev(None, "[DONE]", None)];
    let enc =
        encode(&events, &Framing { line_end: LineEnd::Lf, comments: &[0, 2, 9, 1], multiline: &[0, 1] });
    let text = String::from_utf8(enc.bytes.clone()).unwrap();
    assert_eq!(
        text,
        ": keep-alive\nevent: a\ndata: {\ndata:   \"x\": [\ndata:     1,\ndata:     {\ndata:       \"y\": \"z\"\n\
         data:     }\ndata:   ]\ndata: }\n\n: keep-alive\ndata: [DONE]\n\n: keep-alive\n: keep-alive\n"
    );
    assert_eq!(enc.ends[1], text.find("]\n\n: keep-alive\n: ").unwrap() + 3);
    let got = whole(&enc.bytes).unwrap();
    let a: serde_json::Value = serde_json::from_str(&got[0].data).unwrap();
    assert_eq!(a, serde_json::json!({"x": [1, {"y": "z"}]}));
    assert_eq!(got[1], events[1]);
}

#[test]
fn what_sse_cannot_carry_is_normalised() {
    let events = [ev(Some("a\nb"), "x\ry\r\nz", Some("i\rd")), ev(Some(""), "", Some(""))];
    let enc = encode(&events, &Framing::default());
    assert_eq!(whole(&enc.bytes).unwrap(), [ev(Some("a b"), "x\ny\nz", Some("i d")), ev(None, "", Some(""))]);
}

#[test]
fn parsing_rules_of_the_specification() {
    let s = b": comment\nevent:x\ndata\ndata:  two spaces\nretry: 10\nunknown: 1\nid: 3\n\n\
              event: only-event\n\n\
              id: 4\n\n\
              data: last\n\n\
              data: unterminated";
    assert_eq!(whole(s).unwrap(), [ev(Some("x"), "\n two spaces", Some("3")), ev(None, "last", None)]);
    // An id with NUL is ignored; `Data` is not `data`.
    assert_eq!(whole(b"id: a\0b\nData: no\ndata: yes\n\n").unwrap(), [ev(None, "yes", None)]);
    // The last event needs its blank line, even after a final line end.
    assert_eq!(whole(b"data: a\n").unwrap(), []);
    assert_eq!(whole(b"data: a\r").unwrap(), []);
    assert_eq!(whole(b"data: a\n\r").unwrap(), [ev(None, "a", None)]);
    assert_eq!(whole(b"").unwrap(), []);
}

#[test]
fn cr_lf_split_across_chunks_is_one_line_end() {
    let bytes = b"data: a\r\n\r\ndata: b\r\n\r\n";
    for i in 0..=bytes.len() {
        let (got, r) = run(&[&bytes[..i], &bytes[i..]], DEFAULT_LIMIT);
        r.unwrap();
        assert_eq!(got, [ev(None, "a", None), ev(None, "b", None)], "cut at {i}");
    }
    // A lone CR then LF in the next chunk: one line end, so no blank line, no dispatch.
    let (got, r) = run(&[b"data: a\r", b"\ndata: b\r", b"\n"], DEFAULT_LIMIT);
    r.unwrap();
    assert_eq!(got, []);
    // CR CR is two line ends.
    assert_eq!(whole(b"data: a\r\r").unwrap(), [ev(None, "a", None)]);
    // An empty chunk between CR and LF changes nothing.
    let (got, _) = run(&[b"data: a\r", b"", b"\n\r\n"], DEFAULT_LIMIT);
    assert_eq!(got, [ev(None, "a", None)]);
}

#[test]
fn bom_is_skipped_once_even_when_split() {
    let bytes = b"\xEF\xBB\xBFdata: a\n\n";
    assert_invariant(bytes, DEFAULT_LIMIT);
    assert_eq!(whole(bytes).unwrap(), [ev(None, "a", None)]);
    // A second BOM is data (here: a field name that is not `data`, so nothing is dispatched).
    assert_eq!(whole(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\n").unwrap(), []);
    // Bytes that only start like a BOM are UTF-8 like any other.
    assert_eq!(whole(b"\xEF\xBB"), Err(SseError::TruncatedUtf8 { offset: 0 }));
    assert_eq!(whole(b"\xEFdata: a\n\n"), Err(SseError::InvalidUtf8 { offset: 0 }));
    assert_invariant(b"\xEF\xBBdata", DEFAULT_LIMIT);
}

#[test]
fn utf8_split_inside_every_character_width() {
    for ch in ["é", "€", "😀", "\u{7FF}", "\u{FFFF}", "\u{10FFFF}"] {
        let data = format!("a{ch}b{ch}");
        let bytes = format!("event: t{ch}\ndata: {data}\n\n");
        let want = vec![ev(Some(&format!("t{ch}")), &data, None)];
        assert_eq!(whole(bytes.as_bytes()).unwrap(), want);
        assert_invariant(bytes.as_bytes(), DEFAULT_LIMIT);
    }
}

#[test]
fn invalid_utf8_names_the_offset() {
    // A lone continuation byte.
    assert_eq!(whole(b"data: ab\x80\n\n"), Err(SseError::InvalidUtf8 { offset: 8 }));
    // A character cut short by a line end.
    assert_eq!(whole(b"data: \xE2\x82\n\n"), Err(SseError::InvalidUtf8 { offset: 6 }));
    // An overlong encoding, a surrogate, a byte that never occurs.
    assert_eq!(whole(b"data: \xC0\xAF\n\n"), Err(SseError::InvalidUtf8 { offset: 6 }));
    assert_eq!(whole(b"data: \xED\xA0\x80\n\n"), Err(SseError::InvalidUtf8 { offset: 6 }));
    assert_eq!(whole(b"data: x\n\ndata: \xFF\n\n"), Err(SseError::InvalidUtf8 { offset: 15 }));
    // The events before the bad byte were dispatched; the error is sticky.
    let mut d = Decoder::new();
    let mut out = Vec::new();
    let e = d.feed(b"data: x\n\ndata: \xFF", &mut out).unwrap_err();
    assert_eq!(e.kind(), SseErrorKind::InvalidUtf8);
    assert_eq!(out, [ev(None, "x", None)]);
    assert_eq!(d.feed(b"\n\n", &mut out), Err(e.clone()));
    assert_eq!(d.finish(&mut out), Err(e));
    // Truncated at the end of the stream, in a comment too.
    assert_eq!(whole(b"data: x\n\n: \xF0\x9F\x98"), Err(SseError::TruncatedUtf8 { offset: 11 }));
    for bytes in
        [&b"data: ab\x80\n\n"[..], b"data: \xE2\x82\n\n", b": \xF0\x9F\x98", b"data: \xF0\x9F\x98\x80x\xF0\n"]
    {
        assert_invariant(bytes, DEFAULT_LIMIT);
    }
}

#[test]
fn messages_are_clear() {
    assert_eq!(
        SseError::InvalidUtf8 { offset: 8 }.to_string(),
        "invalid UTF-8 at byte 8 of the event stream"
    );
    assert_eq!(
        SseError::TooLarge { unit: Unit::Line, limit: 16, start: 0 }.to_string(),
        "SSE line starting at byte 0 is larger than the 16-byte limit"
    );
}

#[test]
fn huge_lines_and_events_are_refused_in_bounded_memory() {
    let limit = 64;
    let long = format!("data: {}\n\n", "x".repeat(100));
    assert_eq!(
        run(&[long.as_bytes()], limit).1,
        Err(SseError::TooLarge { unit: Unit::Line, limit, start: 0 })
    );
    assert_invariant(long.as_bytes(), limit);
    // A line with no end at all, fed in small pieces: refused once it passes the limit.
    let mut d = Decoder::with_limit(limit);
    let mut out = Vec::new();
    let mut fed = 0;
    let err = loop {
        match d.feed(b"yyyyyyyyyy", &mut out) {
            Ok(()) => fed += 10,
            Err(e) => break e,
        }
        assert!(fed <= limit, "kept accepting");
    };
    assert_eq!(err.kind(), SseErrorKind::TooLarge);
    // Many short data lines whose sum passes the limit.
    let many = "data: 0123456789\n".repeat(10) + "\n";
    assert_eq!(
        run(&[many.as_bytes()], limit).1,
        Err(SseError::TooLarge { unit: Unit::Event, limit, start: 0 })
    );
    assert_invariant(many.as_bytes(), limit);
    // A bad byte within the limit is reported before the size.
    let mut bad = format!("data: a{}\n", "x".repeat(100)).into_bytes();
    bad[6] = 0xFF;
    assert_eq!(run(&[&bad], limit).1, Err(SseError::InvalidUtf8 { offset: 6 }));
    assert_invariant(&bad, limit);
    // Exactly at the limit is fine.
    let exact = format!("data: {}\n\n", "x".repeat(limit - 6));
    assert_eq!(run(&[exact.as_bytes()], limit).0.len(), 1);
}

#[test]
fn cut_makes_non_empty_chunks_in_order() {
    let b = b"abcdef";
    assert_eq!(cut(b, &[]), [&b"abcdef"[..]]);
    assert_eq!(cut(b, &[4, 2, 2, 0, 6, 99]), [&b"ab"[..], b"cd", b"ef"]);
    assert!(cut(b"", &[0, 1]).is_empty());
}

/// The word-at-a-time line-end search finds what `memchr2` finds, at every length on both
/// sides of its switch to `memchr2` and at every position, with the bytes around a line end
/// that a borrow could confuse (CR and LF next to each other, their neighbours 0x0B, 0x0C,
/// 0x09, 0x0E, 0x8A, 0x8D, NUL).
#[test]
fn the_line_end_search_agrees_with_memchr2() {
    let fill = [b'a', 0x0B, 0x0C, 0x09, 0x0E, 0x8A, 0x8D, 0, 0xFF, b'\n' + 1];
    for len in 0..80 {
        for &f in &fill {
            let mut b = vec![f; len];
            assert_eq!(find_eol(&b), memchr::memchr2(b'\n', b'\r', &b), "none in {len} × {f:#x}");
            for at in 0..len {
                for (first, second) in
                    [(b'\n', None), (b'\r', None), (b'\r', Some(b'\n')), (b'\n', Some(b'\r'))]
                {
                    b.fill(f);
                    b[at] = first;
                    if let Some(s) = second.filter(|_| at + 1 < len) {
                        b[at + 1] = s;
                    }
                    // A later line end must not move the answer.
                    if at + 3 < len {
                        b[len - 1] = b'\r';
                    }
                    assert_eq!(find_eol(&b), memchr::memchr2(b'\n', b'\r', &b), "{b:?}");
                }
            }
        }
    }
}

/// Pieces the streams below are made of: field names, separators, every line end, a BOM,
/// comments, multi-byte characters whole and cut, bytes that are never UTF-8, and NUL.
const PIECES: &[&[u8]] = &[
    b"data",
    b"data:",
    b"data: ",
    b"event:",
    b"event: ",
    b"id:",
    b"id: ",
    b"retry: 10",
    b":",
    b" ",
    b"x",
    b"{\"a\":1}",
    b"\n",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"\r\r",
    b"\xEF\xBB\xBF",
    b"\xEF\xBB",
    b": keep-alive",
    b"\xC3\xA9",
    b"\xE2\x9C\x88",
    b"\xF0\x9F\x98\x80",
    b"\xE2\x9C",
    b"\xC3",
    b"\x80",
    b"\xFF",
    b"\0",
    b"message",
    b"dat",
    b"evenT",
];

fn stream() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        4 => proptest::sample::select(PIECES).prop_map(<[u8]>::to_vec),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

/// What a decoder said for each chunk (the events it appended, or its error) and at the end.
type Trace = (Vec<(Vec<SseEvent>, Result<(), SseError>, u64)>, Result<(), SseError>);

fn trace_new(chunks: &[&[u8]], limit: usize) -> Trace {
    let mut d = Decoder::with_limit(limit);
    let fed = chunks
        .iter()
        .map(|c| {
            let mut out = Vec::new();
            let r = d.feed(c, &mut out);
            (out, r, d.offset())
        })
        .collect();
    (fed, d.finish(&mut Vec::new()))
}

/// The same through [`Decoder::pull`], with one event buffer for the whole stream.
fn trace_pulled(chunks: &[&[u8]], limit: usize) -> Trace {
    let mut d = Decoder::with_limit(limit);
    let mut event = SseEvent { event: Some("stale".into()), data: "stale".into(), id: Some("s".into()) };
    let fed = chunks
        .iter()
        .map(|c| {
            let (mut out, mut pos) = (Vec::new(), 0);
            let r = loop {
                match d.pull(c, &mut pos, &mut event) {
                    Ok(true) => out.push(event.clone()),
                    Ok(false) => {
                        assert_eq!(pos, c.len());
                        break Ok(());
                    }
                    Err(e) => break Err(e),
                }
            };
            (out, r, d.offset())
        })
        .collect();
    (fed, d.finish(&mut Vec::new()))
}

fn trace_old(chunks: &[&[u8]], limit: usize) -> Trace {
    let mut d = oracle::OldDecoder::with_limit(limit);
    let fed = chunks
        .iter()
        .map(|c| {
            let mut out = Vec::new();
            let r = d.feed(c, &mut out);
            (out, r, d.offset())
        })
        .collect();
    let mut out = Vec::new();
    let end = d.finish(&mut out);
    assert!(out.is_empty(), "the end dispatches nothing");
    (fed, end)
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(4000))]

    /// The decoder against the one it replaced: the same events, errors and offsets after
    /// every chunk and at the end, for arbitrary streams cut at arbitrary points, with the
    /// default limit and with limits small enough to be reached.
    #[test]
    fn the_decoder_agrees_with_the_former_one(
        bytes in stream(),
        cuts in proptest::collection::vec(0u32..400, 0..40),
        small in 0usize..40,
        use_small in proptest::bool::ANY,
    ) {
        let limit = if use_small { small } else { DEFAULT_LIMIT };
        let chunks = cut(&bytes, &cuts);
        // An empty chunk too: a failed decoder says its error again.
        let mut with_empty = chunks.clone();
        with_empty.insert(chunks.len() / 2, &[]);
        for chunks in [chunks, with_empty, bytes.chunks(1).collect()] {
            let want = trace_old(&chunks, limit);
            proptest::prop_assert_eq!(&trace_new(&chunks, limit), &want, "{:?} in {:?}", bytes, chunks);
            proptest::prop_assert_eq!(&trace_pulled(&chunks, limit), &want);
        }
    }
}

/// The chunk test of the decoder's shortcut says what a byte-by-byte test says, at every
/// length around its word and half-word reads, for every byte value at every offset.
#[test]
fn the_plain_ascii_test_agrees_with_bytes() {
    let slow = |b: &[u8]| b.iter().all(|&c| c < 0x80 && c != b'\n' && c != b'\r');
    for len in 0..40 {
        for fill in [b'a', 0x0B, 0x0C, 0x09, 0x0E, 0, 0x7F] {
            for at in 0..len {
                for c in 0..=255u8 {
                    let mut b = vec![fill; len];
                    b[at] = c;
                    assert_eq!(plain_ascii(&b), slow(&b), "{b:?}");
                }
            }
            assert_eq!(plain_ascii(&vec![fill; len]), slow(&vec![fill; len]));
        }
    }
}
