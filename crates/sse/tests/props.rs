//! Properties of the SSE layer: encode → cut anywhere → decode gives the events back, and
//! the decoder's result never depends on how the bytes were chunked (the project's central
//! property, at the bytes level), even for arbitrary bytes.

use proptest::prelude::*;
use toolcert_sse::{cut, encode, Decoder, Framing, LineEnd, SseError, SseEvent};

/// Decodes `chunks`; what was dispatched and how it ended.
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

fn line_end() -> impl Strategy<Value = LineEnd> {
    prop_oneof![Just(LineEnd::Lf), Just(LineEnd::CrLf), Just(LineEnd::Cr)]
}

/// Text as data: ASCII, JSON punctuation, spaces, LF, and 2-, 3- and 4-byte characters.
fn text() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => proptest::char::range('a', 'z'),
            2 => prop::sample::select(vec![' ', ':', '"', '\\', '{', '}', ',', '\n']),
            1 => prop::sample::select(vec!['é', 'ß', '€', '中', '😀', '\u{10FFFF}']),
        ],
        0..24,
    )
    .prop_map(|v| v.into_iter().collect())
}

/// A JSON document that carries `s`, so multi-line framing has something to pretty-print.
fn data() -> impl Strategy<Value = String> {
    prop_oneof![
        text(),
        (text(), text())
            .prop_map(|(a, b)| serde_json::json!({"type": "x", "a": a, "n": [1, {"b": b}]}).to_string()),
    ]
}

fn field() -> impl Strategy<Value = Option<String>> {
    // Names and ids: no line breaks or NUL (SSE cannot carry them); names never empty.
    proptest::option::of("[a-z_.]{1,12}|é€😀")
}

fn event() -> impl Strategy<Value = SseEvent> {
    (field(), data(), proptest::option::of("[a-z0-9 ]{0,6}")).prop_map(|(event, data, id)| SseEvent {
        event,
        data,
        id,
    })
}

fn same_json(a: &str, b: &str) -> bool {
    match (serde_json::from_str::<serde_json::Value>(a), serde_json::from_str::<serde_json::Value>(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_through_any_cuts(
        events in proptest::collection::vec(event(), 0..6),
        line_end in line_end(),
        comments in proptest::collection::vec(0u32..7, 0..4),
        multiline in proptest::collection::vec(0u32..6, 0..4),
        cuts in proptest::collection::vec(any::<u32>(), 0..12),
    ) {
        let enc = encode(&events, &Framing { line_end, comments: &comments, multiline: &multiline });
        prop_assert_eq!(enc.ends.len(), events.len());
        let cuts: Vec<u32> = cuts.iter().map(|c| c % (enc.bytes.len() as u32 + 1)).collect();
        let chunks = cut(&enc.bytes, &cuts);
        prop_assert_eq!(chunks.concat(), enc.bytes.clone());
        prop_assert!(chunks.iter().all(|c| !c.is_empty()));
        let (got, r) = run(&chunks, toolcert_sse::DEFAULT_LIMIT);
        prop_assert_eq!(r, Ok(()));
        prop_assert_eq!(got.len(), events.len());
        for (k, (g, e)) in got.iter().zip(&events).enumerate() {
            prop_assert_eq!(&g.event, &e.event);
            prop_assert_eq!(&g.id, &e.id);
            if multiline.contains(&(k as u32)) {
                prop_assert!(same_json(&g.data, &e.data), "{:?} vs {:?}", g.data, e.data);
            } else {
                prop_assert_eq!(&g.data, &e.data);
            }
        }
        // Cutting at an event's end delivers exactly the events before it.
        for (k, &end) in enc.ends.iter().enumerate() {
            let (got, r) = run(&[&enc.bytes[..end]], toolcert_sse::DEFAULT_LIMIT);
            prop_assert_eq!(r, Ok(()));
            prop_assert_eq!(got.len(), k + 1);
            let (got, _) = run(&[&enc.bytes[..end - line_end.as_bytes().len()]], toolcert_sse::DEFAULT_LIMIT);
            prop_assert_eq!(got.len(), k);
        }
    }

    #[test]
    fn chunking_never_changes_the_result(
        bytes in proptest::collection::vec(
            prop_oneof![
                6 => any::<u8>(),
                6 => prop::sample::select(b"data: event:id\r\n\r\n:x".to_vec()),
                2 => prop::sample::select(vec![0xEF, 0xBB, 0xBF, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x98, 0x80]),
            ],
            0..200,
        ),
        cuts in proptest::collection::vec(any::<u32>(), 0..16),
        limit in prop_oneof![Just(toolcert_sse::DEFAULT_LIMIT), 0usize..40],
    ) {
        let want = run(&[&bytes], limit);
        let cuts: Vec<u32> = cuts.iter().map(|c| c % (bytes.len() as u32 + 1)).collect();
        prop_assert_eq!(run(&cut(&bytes, &cuts), limit), want.clone());
        // Empty chunks are legal reads too.
        let mut with_empty: Vec<&[u8]> = vec![b""];
        for c in cut(&bytes, &cuts) {
            with_empty.push(c);
            with_empty.push(b"");
        }
        prop_assert_eq!(run(&with_empty, limit), want.clone());
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        prop_assert_eq!(run(&singles, limit), want);
    }
}
