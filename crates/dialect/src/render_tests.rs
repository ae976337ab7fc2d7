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
            let shaped = def.shape_turn(t, quirks);
            let t = shaped.as_ref().unwrap_or(t);
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
                let shaped = registry::def(dialect).shape_turn(t, quirks);
                let t = shaped.as_ref().unwrap_or(t);
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

/// Each Anthropic and Responses server profile sends its own shape in a good share of
/// generated turns (so certifying the profile exercises it), and only there: counted on the
/// wire of 300 generated cases per profile.
#[test]
fn each_per_call_profile_sends_its_shape() {
    let cfg = toolcert_gen::GenConfig { transport: true, ..toolcert_gen::GenConfig::default() };
    let strategy = toolcert_gen::case_strategy(&cfg);
    for dialect in [Dialect::Anthropic, Dialect::OpenAiResponses] {
        for p in dialect.profiles() {
            let (mut streams, mut shaped) = (0, 0);
            for k in 0..300u64 {
                let case = toolcert_gen::strategy::case_tree(&strategy, 23, k).current();
                for t in &case.streams {
                    let neutral = toolcert_render::render(t);
                    let Ok(wire) = crate::render_wire(t, &neutral, dialect, p.quirks) else { continue };
                    streams += 1;
                    let events: Vec<_> = wire.events.iter().filter_map(|m| m.as_sse()).collect();
                    shaped += usize::from(shows(p.quirks, &events));
                }
            }
            let share = shaped as f64 / streams as f64;
            eprintln!("{}: {shaped} of {streams} streams", p.id());
            if p.quirks.is_plain() {
                assert_eq!(shaped, 0, "{}: no profile shape in the provider's own stream", p.id());
            } else {
                assert!(share > 0.05, "{}: {shaped} of {streams} streams show the profile's shape", p.id());
            }
        }
    }
}

/// Whether a wire stream shows a shape of one of the per-call profiles.
fn shows(q: Quirks, events: &[&toolcert_sse::SseEvent]) -> bool {
    let json = |e: &toolcert_sse::SseEvent| serde_json::from_str::<serde_json::Value>(&e.data).ok();
    let named = |n: &str| -> Vec<serde_json::Value> {
        events.iter().filter(|e| e.event.as_deref() == Some(n)).filter_map(|e| json(e)).collect()
    };
    let whole_input = named("content_block_start").iter().any(|v| {
        v["content_block"]["type"] == "tool_use"
            && v["content_block"]["input"].as_object().is_some_and(|o| !o.is_empty())
    });
    let content_in_start = named("message_start")
        .iter()
        .any(|v| v["message"]["content"].as_array().is_some_and(|c| !c.is_empty()));
    // A call with a `done` and no delta: its arguments only there.
    let deltas: Vec<u64> = named("response.function_call_arguments.delta")
        .iter()
        .filter_map(|v| v["output_index"].as_u64())
        .collect();
    let done_only = named("response.function_call_arguments.done").iter().any(|v| {
        v["arguments"].as_str().is_some_and(|a| !a.is_empty())
            && v["output_index"].as_u64().is_some_and(|i| !deltas.contains(&i))
    });
    // Two events of one call naming it differently.
    let mut ids: std::collections::HashMap<u64, String> = std::collections::HashMap::new();
    let mut rotating = false;
    for v in events
        .iter()
        .filter(|e| e.event.as_deref().is_some_and(|n| n.contains("function_call")))
        .filter_map(|e| json(e))
    {
        if let (Some(i), Some(id)) = (v["output_index"].as_u64(), v["item_id"].as_str()) {
            rotating |= ids.insert(i, id.to_owned()).is_some_and(|before| before != id);
        }
    }
    let hosted = named("response.output_item.added").iter().any(|v| v["item"]["type"] == "tool_search_call");
    let hostile = events.iter().any(|e| e.data.contains(r#""__proto__":"#));
    let [a, b, c, d, e] = [whole_input, content_in_start, done_only, rotating, hosted];
    match () {
        _ if q.hostile => hostile && !(a || b || c || d || e),
        _ if q.anthropic_input_in_start => a,
        _ if q.anthropic_content_in_start => b,
        _ if q.responses_done_only => c,
        _ if q.responses_rotating_item_id => d,
        _ if q.responses_hosted_items => e,
        _ => a || b || c || d || e || hostile,
    }
}
