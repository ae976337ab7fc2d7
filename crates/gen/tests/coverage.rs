//! The generator's acceptance tests: every adversarial class is reached on purpose (the
//! coverage floor), every case renders with its split points on character boundaries, a
//! seed reproduces its cases, and shrinking ends at a small, readable counterexample.

use std::time::Instant;

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use toolcert_gen::{
    case_from_unstructured, case_strategy, cases, classify, rng_for_seed, turn_strategy, ArbitraryCase,
    CoverageStats, GenConfig, Label, LabelGroup, ShapeMix,
};
use toolcert_render::render;
use toolcert_scenario::{Block, Case, Ending, EndingKind, ForeignKind, Shape, StreamSchedule};

/// The cases the acceptance floor is measured on: a runner seeded as the brief says.
/// Cases 0..n of `seed`, as a run draws them: each from the seed and its position alone.
fn seeded(cfg: &GenConfig, seed: u64, n: usize) -> Vec<Case> {
    let strategy = case_strategy(cfg);
    (0..n).map(|k| toolcert_gen::strategy::case_tree(&strategy, seed, k as u64).current()).collect()
}

#[test]
fn coverage_floor_seed_1() {
    let mut stats = CoverageStats::new();
    for case in seeded(&GenConfig::default(), 1, 5000) {
        stats.record(&case);
    }
    println!("{stats}");
    let low = stats.below(2.0, &[LabelGroup::Split, LabelGroup::Ending, LabelGroup::Fault]);
    assert!(low.is_empty(), "labels below the 2% floor: {low:?}\n{stats}");
    // Every split class, ending and fault applies to some cases (no vacuous pass).
    for l in Label::ALL {
        if matches!(l.group(), LabelGroup::Split | LabelGroup::Ending | LabelGroup::Fault) {
            assert!(stats.get(l).applicable > 0, "{l} applied to no case");
        }
    }
    // Same tool, same keys: common among multi-call turns, as name-keyed buffers need.
    let same = stats.get(Label::SameToolTwice).percent().unwrap();
    assert!(same >= 25.0, "same_tool_twice only {same:.1}% of multi-call cases");
    for l in [
        Label::TextBeforeCall,
        Label::TextAfterCall,
        Label::Interleaved,
        Label::LongArguments,
        Label::ConcurrentStreams,
        Label::SequentialStreams,
        Label::InvalidDocument,
        Label::EmptyArguments,
    ] {
        let p = stats.get(l).percent().unwrap();
        assert!(p >= 2.0, "{l} only {p:.2}%");
    }
    // The widened space: every class of size, names, Unicode, numbers,
    // degenerate documents and indices in at least 1% of its cases.
    let low = stats.below(
        1.0,
        &[
            LabelGroup::Size,
            LabelGroup::Names,
            LabelGroup::Unicode,
            LabelGroup::Numbers,
            LabelGroup::Degenerate,
            LabelGroup::Indices,
        ],
    );
    assert!(low.is_empty(), "labels below the 1% floor: {low:?}\n{stats}");
    // Turns without calls (text-only and empty), each with every ending, on purpose.
    let low = stats.below(1.0, &[LabelGroup::NoCall]);
    assert!(low.is_empty(), "turns without calls below the 1% floor: {low:?}\n{stats}");
    // Huge documents (4 KiB and more) in at least 2% of all cases.
    let huge = stats.get(Label::HugeArguments).count as f64 / stats.cases as f64 * 100.0;
    assert!(huge >= 2.0, "huge_arguments in only {huge:.2}% of cases");
    // The JSON form has the denominators.
    let json = serde_json::to_value(&stats).unwrap();
    assert!(json["inside_unicode_escape"]["applicable"].as_u64().unwrap() > 4000);
}

/// Dialect events: each in at least 1% of the cases whose shape its
/// dialect carries, in the default mix and in the mix the runner generates for the wire
/// and bytes levels of that dialect.
#[test]
fn dialect_events_floor() {
    for mix in [ShapeMix::Both, ShapeMix::PerCall, ShapeMix::Interleaved] {
        // The spliced generation is drawn where the runner asks for it (the wire and bytes
        // levels of the dialects with a start event): asked for here too.
        let cfg = GenConfig { shape_mix: mix, spliced: true, ..GenConfig::default() };
        let mut stats = CoverageStats::new();
        for case in seeded(&cfg, 1, 5000) {
            stats.record(&case);
        }
        println!("{stats}");
        let dialect: Vec<_> = Label::ALL.into_iter().filter(|l| l.group() == LabelGroup::Dialect).collect();
        assert_eq!(dialect.len(), 12);
        for l in dialect {
            let c = stats.get(l);
            let applies = match mix {
                ShapeMix::Both => true,
                ShapeMix::PerCall => l.scope() == toolcert_gen::Scope::PerCallTurn,
                ShapeMix::Interleaved => l.scope() == toolcert_gen::Scope::InterleavedTurn,
            };
            if !applies {
                continue;
            }
            let p = c.percent().unwrap_or(0.0);
            assert!(c.applicable >= 1000 && p >= 1.0, "{mix:?}: {l} {p:.2}% of {}\n{stats}", c.applicable);
        }
    }
}

/// Foreign blocks: every kind delivered in at least 1% of 5,000 default
/// cases, though four of them only one dialect can express (so each is mixed in on purpose,
/// not left to the luck of a shared draw).
#[test]
fn foreign_blocks_floor_seed_1() {
    let mut stats = CoverageStats::new();
    let mut ids_clash = 0;
    for case in seeded(&GenConfig::default(), 1, 5000) {
        stats.record(&case);
        for t in &case.streams {
            // A foreign block never shares its id with a call of the turn.
            ids_clash +=
                t.foreign().filter(|f| !f.id.is_empty() && t.calls().any(|c| c.call_id == f.id)).count();
        }
    }
    let low = stats.below(1.0, &[LabelGroup::Foreign]);
    assert!(low.is_empty(), "foreign kinds below the 1% floor: {low:?}\n{stats}");
    assert_eq!(
        Label::ALL.iter().filter(|l| l.group() == LabelGroup::Foreign).count(),
        ForeignKind::ALL.len()
    );
    assert_eq!(ids_clash, 0);
    // Mixed in, not the rule: most cases carry none.
    let any =
        Label::ALL.iter().filter(|l| l.group() == LabelGroup::Foreign).map(|&l| stats.get(l).count).max();
    assert!(any.unwrap() < 1000, "{stats}");
}

/// Cuts inside an event live at the bytes level: the transport profile reaches every aim.
#[test]
fn transport_profile_cuts_inside_events() {
    let cfg = GenConfig { transport: true, ..GenConfig::default() };
    let mut stats = CoverageStats::new();
    for case in seeded(&cfg, 1, 5000) {
        for turn in &case.streams {
            // Only an abandoned stream drops its connection inside the next event.
            if turn.transport.tail.is_some() {
                assert_eq!(turn.ending.kind(), EndingKind::Abandoned, "{}", case.name);
            }
        }
        stats.record(&case);
    }
    println!("{stats}");
    let low = stats.below(1.0, &[LabelGroup::Transport]);
    assert!(low.is_empty(), "labels below the 1% floor: {low:?}\n{stats}");
    for l in Label::ALL.into_iter().filter(|l| l.group() == LabelGroup::Transport) {
        assert!(stats.get(l).applicable > 4000, "{l}");
    }
}

/// `--args-size 1048576`: huge documents are common and reach past 64 KiB, up to the size.
#[test]
fn size_profile_reaches_a_mebibyte() {
    let cfg = GenConfig { max_args_size: 1 << 20, multi_stream: false, ..GenConfig::default() };
    let mut largest = 0;
    let mut huge = 0;
    let mut past_64k = 0;
    for case in cases(&cfg, 5).take(600) {
        for call in case.streams.iter().flat_map(|t| t.calls()) {
            let n = call.arguments.len();
            largest = largest.max(n);
            huge += usize::from(n >= 4096);
            past_64k += usize::from(n > 64 * 1024);
        }
    }
    // (Two documents end to end are twice one.)
    assert!(largest <= 2 * ((1 << 20) + 8 * 1024), "{largest}");
    assert!(largest > 512 * 1024, "largest {largest}");
    assert!(huge >= 60 && past_64k >= 20, "{huge} huge, {past_64k} past 64 KiB");
    // The default stays at 64 KiB at most.
    let most = cases(&GenConfig::default(), 5)
        .take(3000)
        .flat_map(|c| c.streams.into_iter().flat_map(|t| t.blocks))
        .filter_map(|b| match b {
            Block::Call(c) => Some(c.arguments.len()),
            _ => None,
        })
        .max()
        .unwrap();
    assert!((16 * 1024..=2 * 72 * 1024).contains(&most), "{most}");
}

#[test]
fn schema_profile_violates_some_calls() {
    let cfg = GenConfig { schema: true, ..GenConfig::default() };
    let mut stats = CoverageStats::new();
    for case in seeded(&cfg, 2, 2000) {
        for turn in &case.streams {
            for call in turn.calls() {
                assert!(turn.schema_of(&call.name).is_some(), "{} has no schema", call.name);
            }
        }
        stats.record(&case);
    }
    let v = stats.get(Label::SchemaViolation).percent().unwrap();
    assert!((2.0..40.0).contains(&v), "schema_violation {v:.1}%\n{stats}");
    // Violations are the exception: most calls that parse satisfy their schema.
    let mut default_stats = CoverageStats::new();
    for case in seeded(&GenConfig::default(), 2, 500) {
        assert!(case.streams.iter().all(|t| t.tools.iter().all(|tool| tool.schema.is_none())));
        default_stats.record(&case);
    }
    assert_eq!(default_stats.get(Label::SchemaViolation).applicable, 0);
}

#[test]
fn a_seed_p1_violation_is_generated() {
    let cfg = GenConfig { schema: true, ..GenConfig::default() };
    let found = cases(&cfg, 3)
        .take(3000)
        .any(|c| c.streams.iter().any(|t| t.calls().any(|call| call.arguments.contains("\"P1\""))));
    assert!(found, "no priority P1 among 3000 schema cases");
}

#[test]
fn every_case_renders_with_splits_on_char_boundaries() {
    for cfg in [
        GenConfig::default(),
        GenConfig { schema: true, shape_mix: ShapeMix::Interleaved, ..GenConfig::default() },
        GenConfig {
            faults: false,
            multi_stream: false,
            shape_mix: ShapeMix::PerCall,
            ..GenConfig::default()
        },
    ] {
        for case in cases(&cfg, 4).take(3000) {
            check_case(&case, &cfg);
        }
    }
}

fn check_case(case: &Case, cfg: &GenConfig) {
    // What a scenario value read from a file must satisfy, every generated case satisfies.
    if let Err(e) = case.validate() {
        panic!("{}: {e}", case.name);
    }
    assert!(!case.streams.is_empty());
    assert!(case.streams.len() <= cfg.max_streams);
    if !cfg.multi_stream {
        assert_eq!(case.streams.len(), 1);
    }
    for turn in &case.streams {
        let rendered = render(turn);
        assert_eq!(rendered.events.len(), rendered.origins.len());
        if !cfg.faults {
            assert!(turn.faults.is_empty());
        }
        match (&turn.shape, cfg.shape_mix) {
            (Shape::PerCall, ShapeMix::Interleaved) | (Shape::Interleaved(_), ShapeMix::PerCall) => {
                panic!("shape {:?} outside the mix {:?}", turn.shape, cfg.shape_mix)
            }
            _ => {}
        }
        let mut ids = Vec::new();
        let mut prev_text = false;
        let mut ordinal = 0;
        let mut last_index: Option<u32> = None;
        for (pos, block) in turn.blocks.iter().enumerate() {
            match block {
                Block::Text(t) => {
                    assert!(!prev_text, "adjacent text blocks");
                    assert!(!t.text.is_empty());
                    prev_text = true;
                    for &s in &t.splits {
                        assert!(t.text.is_char_boundary(s), "text split {s} in {:?}", t.text);
                    }
                }
                Block::Call(c) => {
                    prev_text = false;
                    for &s in &c.splits {
                        assert!(
                            s <= c.arguments.len() && c.arguments.is_char_boundary(s),
                            "split {s} in {:?}",
                            c.arguments
                        );
                    }
                    assert!(c.splits.windows(2).all(|w| w[0] <= w[1]), "splits sorted");
                    assert!(
                        c.call_id.starts_with("toolu_01") || c.call_id.starts_with("call_"),
                        "{}",
                        c.call_id
                    );
                    assert!(!ids.contains(&c.call_id), "duplicate id {}", c.call_id);
                    ids.push(c.call_id.clone());
                    // Per-call indices are block positions (numbered across text, as Anthropic
                    // does); interleaved ones are keys, increasing but not always dense from 0.
                    if matches!(turn.shape, Shape::Interleaved(_)) {
                        assert!(c.index >= ordinal && last_index.is_none_or(|l| c.index > l), "{turn:?}");
                    } else {
                        assert_eq!(c.index, pos as u32);
                    }
                    last_index = Some(c.index);
                    // Every name the providers accept: `^[a-zA-Z0-9_-]{1,64}$`.
                    assert!(
                        (1..=64).contains(&c.name.len())
                            && c.name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'),
                        "tool name {:?}",
                        c.name
                    );
                    assert!(turn.tools.iter().any(|t| t.name == c.name), "{} is offered", c.name);
                    ordinal += 1;
                }
                Block::Foreign(f) => {
                    prev_text = false;
                    // Numbered as the provider numbers its blocks; never sharing a call's id.
                    if matches!(turn.shape, Shape::PerCall) {
                        assert_eq!(f.index, pos as u32);
                    }
                    assert!(f.id.is_empty() || !ids.contains(&f.id), "duplicate id {}", f.id);
                    for &s in &f.splits {
                        assert!(f.text.is_char_boundary(s), "foreign split {s} in {:?}", f.text);
                    }
                }
            }
        }
        assert!(ordinal <= cfg.max_calls as u32);
        if let Ending::Stop(r) = turn.ending {
            let chat = matches!(turn.shape, Shape::Interleaved(_));
            let chat_reason = matches!(r.wire_name(), "tool_calls" | "stop" | "length" | "content_filter");
            assert_eq!(chat, chat_reason, "reason {r:?} for shape {:?}", turn.shape);
        }
    }
    if let StreamSchedule::Concurrent(_) = case.schedule {
        assert!(case.streams.len() >= 2);
    }
}

/// Streams of one case often announce the same index for the same tool: that is what state
/// shared between accumulators trips on.
#[test]
fn multi_stream_cases_reuse_indices_and_tools() {
    let mut multi = 0;
    let mut shared = 0;
    for case in cases(&GenConfig::default(), 9).take(4000) {
        if case.streams.len() < 2 {
            continue;
        }
        multi += 1;
        let first: Vec<(u32, &str)> = case.streams[0].calls().map(|c| (c.index, c.name.as_str())).collect();
        if case.streams[1..].iter().any(|t| t.calls().any(|c| first.contains(&(c.index, c.name.as_str())))) {
            shared += 1;
        }
    }
    assert!(multi > 300, "{multi} multi-stream cases");
    assert!(shared * 2 > multi, "{shared} of {multi} multi-stream cases share an index and tool");
}

#[test]
fn same_seed_same_cases() {
    let cfg = GenConfig::default();
    let a = seeded(&cfg, 7, 300);
    let b = seeded(&cfg, 7, 300);
    assert_eq!(a, b);
    let c = seeded(&cfg, 8, 300);
    assert_ne!(a, c);
    // `cases` is the same stream, only named.
    let named: Vec<Case> = cases(&cfg, 7).take(300).collect();
    assert_eq!(named[5].name, "gen/7/5");
    for (x, y) in a.iter().zip(&named) {
        assert_eq!(x.streams, y.streams);
        assert_eq!(x.schedule, y.schedule);
    }
}

#[test]
fn arbitrary_cases_render_and_empty_input_is_simple() {
    use arbitrary::{Arbitrary, Unstructured};
    let ArbitraryCase(simple) = ArbitraryCase::arbitrary(&mut Unstructured::new(&[])).unwrap();
    assert_eq!(simple.streams.len(), 1);
    let turn = &simple.streams[0];
    assert_eq!(turn.ending.kind(), EndingKind::Complete);
    assert!(turn.faults.is_empty());
    assert_eq!(turn.calls().count(), 1);
    let mut x = 0x1234_5678_9abc_def0u64;
    for n in 0..2000 {
        let bytes: Vec<u8> = (0..(n % 700))
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let case = case_from_unstructured(&mut Unstructured::new(&bytes), &GenConfig::default()).unwrap();
        check_case(&case, &GenConfig::default());
    }
}

/// A runner config without failure persistence (these tests replay by seed).
fn quiet(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// Shrinking a failure that needs one specific thing ends at a case with only that thing.
#[test]
fn shrinking_reaches_a_minimal_counterexample() {
    let mut runner = TestRunner::new_with_rng(quiet(2000), rng_for_seed(12));
    // "Fails" whenever a split lands inside a \u escape (what a per-fragment decoder trips on).
    let result = runner.run(&case_strategy(&GenConfig::default()), |case| {
        if classify(&case).has(Label::InsideUnicodeEscape) {
            Err(TestCaseError::fail("split inside \\u"))
        } else {
            Ok(())
        }
    });
    let Err(TestError::Fail(_, case)) = result else { panic!("no failure found") };
    println!("{}", serde_json::to_string_pretty(&case).unwrap());
    assert_eq!(case.streams.len(), 1, "one stream");
    let turn = &case.streams[0];
    assert!(turn.faults.is_empty() && turn.pings.is_empty(), "no faults, no pings");
    assert_eq!(turn.ending.kind(), EndingKind::Complete);
    assert_eq!(turn.blocks.len(), 1, "one block");
    let call = turn.calls().next().unwrap();
    assert_eq!(call.splits.len(), 1, "one split: {:?}", call.splits);
    assert!(call.arguments.len() <= 48, "short arguments: {}", call.arguments);
    assert!(call.arguments.contains("\\u"));
}

#[test]
fn a_fault_shrinks_to_the_fault_alone() {
    let mut runner = TestRunner::new_with_rng(quiet(2000), rng_for_seed(13));
    let result = runner.run(&case_strategy(&GenConfig::default()), |case| {
        if classify(&case).has(Label::FragmentAfterStop) {
            Err(TestCaseError::fail("fragment after stop"))
        } else {
            Ok(())
        }
    });
    let Err(TestError::Fail(_, case)) = result else { panic!("no failure found") };
    println!("{}", serde_json::to_string_pretty(&case).unwrap());
    assert_eq!(case.streams.len(), 1);
    let turn = &case.streams[0];
    assert_eq!(turn.faults.len(), 1);
    assert!(turn.pings.is_empty());
    assert_eq!(turn.ending.kind(), EndingKind::Complete);
    assert_eq!(turn.blocks.len(), 1);
    let call = turn.calls().next().unwrap();
    assert!(call.splits.is_empty(), "{:?}", call.splits);
    assert!(call.arguments.len() <= 30, "{}", call.arguments);
}

#[test]
fn turn_strategy_shrinks_too() {
    let mut runner = TestRunner::new_with_rng(quiet(500), rng_for_seed(12));
    let result = runner.run(&turn_strategy(&GenConfig::default()), |turn| {
        if turn.calls().count() >= 2 {
            Err(TestCaseError::fail("two calls"))
        } else {
            Ok(())
        }
    });
    let Err(TestError::Fail(_, turn)) = result else { panic!("no failure found") };
    assert_eq!(turn.blocks.len(), 2, "{turn:?}");
    assert_eq!(turn.ending.kind(), EndingKind::Complete);
    assert!(turn.calls().all(|c| c.arguments.len() <= 30), "{turn:?}");
}

/// `cargo test -p toolcert-gen --release --test coverage -- --ignored --nocapture speed`
#[test]
#[ignore]
fn speed() {
    let cfg = GenConfig::default();
    let strategy = case_strategy(&cfg);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng_for_seed(1));
    let n = 100_000;
    let t = Instant::now();
    let mut bytes = 0usize;
    for _ in 0..n {
        let case = strategy.new_tree(&mut runner).unwrap().current();
        bytes += case.streams.iter().flat_map(|t| t.calls()).map(|c| c.arguments.len()).sum::<usize>();
    }
    let gen = t.elapsed();
    let t = Instant::now();
    let mut events = 0usize;
    for case in cases(&cfg, 1).take(n) {
        for turn in &case.streams {
            events += render(turn).events.len();
        }
    }
    let gen_render = t.elapsed();
    let t = Instant::now();
    let mut stats = CoverageStats::new();
    for case in cases(&cfg, 1).take(n) {
        stats.record(&case);
    }
    let gen_classify = t.elapsed();
    let rate = |d: std::time::Duration| n as f64 / d.as_secs_f64();
    println!(
        "generate: {:.0} cases/s ({} argument bytes/case)\ngenerate+render: {:.0} cases/s ({} events/case)\ngenerate+classify: {:.0} cases/s",
        rate(gen),
        bytes / n,
        rate(gen_render),
        events / n,
        rate(gen_classify)
    );
}

#[test]
fn named_cases_are_valid_scenarios() {
    for named in toolcert_gen::named::all() {
        if let Err(e) = named.case.validate() {
            panic!("{}: {e}", named.case.name);
        }
    }
}
