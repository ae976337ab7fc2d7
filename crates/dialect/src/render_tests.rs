//! The renderers against what they were: every payload written by hand is the bytes serde
//! wrote ([`crate::json::serde_oracle`]), and the SSE bytes level's own encoder, cuts and
//! counts are what the SSE crate's encoder, a sort and a look-up per chunk made
//! ([`crate::bytes::tests::render_sse_bytes_before`]), over generated cases in every
//! dialect and quirk profile.

use proptest::strategy::ValueTree;
use toolcert_scenario::Transport;

use crate::{registry, Dialect, Quirks, WireStream};

/// Renders every stream of `cases` generated cases both ways; `check` sees each wire stream
/// rendered, with its turn's transport.
fn each_stream(dialect: Dialect, quirks: Quirks, cases: u32, check: &mut dyn FnMut(&WireStream, &Transport)) {
    // As a bytes-level run in the dialect generates them (the runner's `gen_config`).
    let def = registry::def(dialect);
    let interleaved = toolcert_scenario::Shape::Interleaved(Default::default());
    let shape_mix = match (def.carries(&toolcert_scenario::Shape::PerCall), def.carries(&interleaved)) {
        (true, true) => toolcert_gen::ShapeMix::Both,
        (false, true) => toolcert_gen::ShapeMix::Interleaved,
        _ => toolcert_gen::ShapeMix::PerCall,
    };
    let cfg = toolcert_gen::GenConfig {
        shape_mix,
        done_mismatch: def.repeats_arguments(),
        transport: true,
        corrupt: def.binary(),
        ..toolcert_gen::GenConfig::default()
    };
    let strategy = toolcert_gen::case_strategy(&cfg);
    let mut rendered = 0;
    for k in 0..cases {
        let case = toolcert_gen::strategy::case_tree(&strategy, 13, k.into()).current();
        for t in &case.streams {
            let neutral = toolcert_render::render(t);
            let new = crate::render_wire(t, &neutral, dialect, quirks);
            let old = crate::json::serde_oracle::with(|| crate::render_wire(t, &neutral, dialect, quirks));
            assert_eq!(new, old, "{dialect:?} {quirks:?}, case {k}");
            if let Ok(wire) = new {
                rendered += 1;
                check(&wire, &t.transport);
            }
        }
    }
    assert!(rendered > cases / 5, "{dialect:?} {quirks:?}: {rendered} streams rendered");
}

/// Bedrock's bytes, cuts and counts of 500 generated cases are the former encoder's (every
/// message encoded from its `Message`, every cut resolved byte by byte), with corruptions,
/// tails and cuts of every aim among them.
#[test]
fn bedrock_bytes_are_what_the_former_encoder_made() {
    let (mut corrupt, mut tails, mut cut) = (0, 0, 0);
    each_stream(Dialect::Bedrock, Quirks::default(), 500, &mut |wire, transport| {
        let got = crate::render_bytes(Dialect::Bedrock, wire, transport);
        let want = crate::bedrock::tests::render_bytes_before(wire, transport);
        assert_eq!(got, want, "{transport:?}");
        corrupt += usize::from(transport.corrupt.is_some());
        tails += usize::from(transport.tail.is_some() && wire.next.is_some());
        cut += usize::from(transport.cuts.len() > 1);
    });
    assert!(corrupt > 0 && tails > 0 && cut > 0, "{corrupt} {tails} {cut}");
}

/// Every event of 500 generated cases in each dialect and profile is the bytes serde wrote.
#[test]
fn hand_written_payloads_are_what_serde_wrote() {
    for (dialect, quirks) in registry::speeches() {
        each_stream(dialect, quirks, 500, &mut |_, _| {});
    }
}

/// The SSE dialects' bytes, cuts and counts of 500 generated cases each are the former
/// encoder's, with every transport feature among them (line ends, comments, pretty-printed
/// data, tails, cuts).
#[test]
fn sse_bytes_are_what_the_former_encoder_made() {
    for (dialect, quirks) in registry::speeches().filter(|&(d, _)| !registry::def(d).binary()) {
        let (mut comments, mut multiline, mut tails, mut cut) = (0, 0, 0, 0);
        each_stream(dialect, quirks, 500, &mut |wire, transport| {
            let got = crate::render_bytes(dialect, wire, transport);
            let want = crate::bytes::tests::render_sse_bytes_before(wire, transport);
            assert_eq!(got, want, "{dialect:?} {quirks:?}: {transport:?}");
            comments += usize::from(!transport.comments.is_empty());
            multiline += usize::from(!transport.multiline.is_empty());
            tails += usize::from(transport.tail.is_some() && wire.next.is_some());
            cut += usize::from(transport.cuts.len() > 1);
        });
        assert!(
            comments > 0 && multiline > 0 && tails > 0 && cut > 0,
            "{comments} {multiline} {tails} {cut}"
        );
    }
}

/// The bytes level framed as the events are rendered is the bytes of the wire stream, in
/// every dialect and profile over 500 generated cases (and the direct path is taken),
/// with the payloads written by hand and by serde.
#[test]
fn bytes_framed_as_rendered_are_the_wire_streams_bytes() {
    for (dialect, quirks) in registry::speeches() {
        let (mut direct, mut corrupt, mut tails, mut unknown) = (0, 0, 0, 0);
        // Corruptions where the framing is binary, as the runner generates them.
        let binary = registry::def(dialect).binary();
        let cfg = toolcert_gen::GenConfig {
            transport: true,
            corrupt: binary,
            ..toolcert_gen::GenConfig::default()
        };
        let strategy = toolcert_gen::case_strategy(&cfg);
        for k in 0..500u64 {
            let case = toolcert_gen::strategy::case_tree(&strategy, 17, k).current();
            for t in &case.streams {
                let neutral = toolcert_render::render(t);
                let via_wire = crate::render_wire(t, &neutral, dialect, quirks)
                    .map(|w| crate::render_bytes(dialect, &w, &t.transport));
                let got = crate::render_wire_bytes(t, &neutral, dialect, quirks);
                assert_eq!(got, via_wire, "{dialect:?} {quirks:?}, case {k}");
                let serde = crate::json::serde_oracle::with(|| {
                    crate::render_wire_bytes(t, &neutral, dialect, quirks)
                });
                assert_eq!(serde, via_wire, "{dialect:?} {quirks:?}, case {k}, serde");
                let ids = crate::json::Ids::new(t);
                let framed = registry::def(dialect).render_bytes_direct(t, &neutral, quirks, &ids).is_some();
                direct += usize::from(framed);
                corrupt += usize::from(framed && t.transport.corrupt.is_some());
                tails += usize::from(framed && t.transport.tail.is_some());
                unknown += usize::from(framed && !t.wire.unknown.is_empty());
            }
        }
        if quirks == Quirks::default() {
            assert!(direct > 50, "{dialect:?}: {direct} streams framed as rendered");
        }
        if quirks == Quirks::default() && !binary {
            assert!(tails > 5, "{dialect:?}: {tails} streams with a tail framed as rendered");
        }
        if dialect == crate::Dialect::Anthropic {
            assert!(unknown > 10, "{unknown} streams with units of unknown types framed as rendered");
        }
        if binary {
            assert!(corrupt > 10, "{dialect:?}: {corrupt} corrupted streams framed as rendered");
        }
    }
}

/// Strings of every length around the escaper's buffer and word sizes, dense and sparse in
/// escapes, ASCII and not, every control character, are escaped as `serde_json` escapes
/// them.
#[test]
fn strings_are_escaped_as_serde_json_escapes_them() {
    let pieces = [
        "a",
        "\"",
        "\\",
        "é",
        "✈",
        "\u{1}",
        "\n",
        "\t",
        "\u{1f}",
        "\u{7f}",
        "{\"k\": ",
        "\u{10FFFF}",
        "xyzw",
    ];
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut all: String = (0u8..0x80).map(char::from).collect();
    all.push_str("é ✈ \u{2028}");
    let mut cases = vec![String::new(), all.clone(), all.repeat(9)];
    for round in 0..3000 {
        let len = (next() % [8, 40, 700][round % 3]) as usize;
        // Mostly plain text with escapes at some density.
        let density = next() % 8 + 1;
        let s: String = (0..len)
            .map(|_| match next() % 16 < density {
                true => pieces[(next() % pieces.len() as u64) as usize],
                false => "m",
            })
            .collect();
        cases.push(s);
    }
    for s in &cases {
        let mut out = crate::json::Payload::with_capacity(0);
        out.raw("x");
        out.str(s);
        assert_eq!(out.finish(), format!("x{}", serde_json::to_string(s).unwrap()), "{s:?}");
    }
}
