//! Bedrock ConverseStream end to end: the reference conforms at the wire and bytes levels,
//! the damaged messages are generated and judged as BYTES-CHECKSUM, and each Bedrock mutant
//! fails only because of the one thing it gets wrong.

use toolcert::gen::{GenConfig, ShapeMix};
use toolcert::oracle::{Invariant, Profile};
use toolcert::runner::{check, Setting};
use toolcert::scenario::{Case, Dialect};
use toolcert::subject::driver::Speech;
use toolcert::subject::Level;

fn setting(level: Level) -> Setting {
    Setting {
        level,
        speech: Speech { dialect: Dialect::Bedrock, quirks: Default::default() },
        ..Setting::events(Profile { schema: true, ..Default::default() })
    }
}

/// The generated cases of a Bedrock certification at `level`.
fn cases(level: Level, n: usize) -> Vec<Case> {
    let cfg = GenConfig {
        shape_mix: ShapeMix::PerCall,
        done_mismatch: false,
        transport: level == Level::Bytes,
        corrupt: level == Level::Bytes,
        ..GenConfig::default()
    };
    toolcert::gen::cases(&cfg, 3).take(n).collect()
}

#[test]
fn the_reference_conforms_and_damaged_messages_are_exercised() {
    let reference = toolcert::reference::ReferenceSubject;
    for level in [Level::Wire, Level::Bytes] {
        let mut damaged = 0;
        for case in cases(level, 400) {
            let c = check(&reference, &case, setting(level));
            assert!(c.violations.is_empty(), "{level:?} {}: {:?}", case.name, c.violations);
            if c.exercised.contains(Invariant::BytesChecksum) {
                damaged += 1;
            }
        }
        // Only the bytes level sends a damaged message (about one turn in five has one).
        match level {
            Level::Bytes => assert!(damaged > 40, "{damaged} cases exercised BYTES-CHECKSUM"),
            _ => assert_eq!(damaged, 0),
        }
    }
}

#[test]
fn the_crc_mutant_fails_only_on_damaged_messages_and_as_bytes_checksum() {
    let m = toolcert::mutants::by_name("bedrock-crc-unchecked").unwrap();
    let subject = m.subject();
    let (mut caught, mut sound) = (0, 0);
    for mut case in cases(Level::Bytes, 300) {
        let damaged = case.streams.iter().any(|t| t.transport.corrupt.is_some());
        let v = check(&*subject, &case, setting(Level::Bytes)).violations;
        if damaged && !v.is_empty() {
            caught += 1;
            assert!(v.iter().all(|v| v.invariant == Invariant::BytesChecksum), "{}: {v:?}", case.name);
        }
        // The same turns with every message sound: nothing to catch.
        case.streams.iter_mut().for_each(|t| t.transport.corrupt = None);
        let v = check(&*subject, &case, setting(Level::Bytes)).violations;
        assert!(v.is_empty(), "{} fails with sound messages: {v:?}", case.name);
        sound += 1;
    }
    assert!(caught > 10 && sound == 300, "{caught} caught");
}

#[test]
fn the_other_bedrock_mutants_conform_where_their_bug_cannot_show() {
    // Whole messages per chunk: a decoder that loses what a chunk leaves unfinished is right.
    let m = toolcert::mutants::by_name("bedrock-per-chunk").unwrap();
    for mut case in cases(Level::Bytes, 200) {
        for t in &mut case.streams {
            t.transport.cuts.clear();
            t.transport.tail = None;
            t.transport.corrupt = None;
        }
        let v = check(&*m.subject(), &case, setting(Level::Bytes)).violations;
        assert!(v.is_empty(), "{}: {v:?}", case.name);
    }
    // No exception message: nothing to take for a clean end.
    let m = toolcert::mutants::by_name("bedrock-exception-as-end").unwrap();
    for case in cases(Level::Wire, 200) {
        if case.streams.iter().any(|t| matches!(t.ending, toolcert::scenario::Ending::Errored { .. })) {
            continue;
        }
        let v = check(&*m.subject(), &case, setting(Level::Wire)).violations;
        assert!(v.is_empty(), "{}: {v:?}", case.name);
    }
    // No fault: every delta is the current tool use's anyway.
    let m = toolcert::mutants::by_name("bedrock-index-ignored").unwrap();
    for case in cases(Level::Wire, 200) {
        if case.streams.iter().any(|t| !t.faults.is_empty()) {
            continue;
        }
        let v = check(&*m.subject(), &case, setting(Level::Wire)).violations;
        assert!(v.is_empty(), "{}: {v:?}", case.name);
    }
}

/// How many units of unknown types a turn's Bedrock wire carries: delta members and event
/// types its decoder does not read.
fn unknown_units(t: &toolcert::scenario::Turn) -> (usize, usize) {
    use toolcert::dialect::bedrock::{DELTA_MEMBERS, EVENTS};
    let neutral = toolcert::render::render(t);
    // A turn Bedrock cannot express (a redacted thinking block) is not run in it.
    let Ok(wire) = toolcert::dialect::render_wire(t, &neutral, Dialect::Bedrock, Default::default()) else {
        return (0, 0);
    };
    let (mut members, mut events) = (0, 0);
    for f in wire.events.iter().filter_map(|m| m.as_frame()) {
        match f.header(":event-type") {
            Some("contentBlockDelta") => {
                let v: serde_json::Value = serde_json::from_slice(&f.payload).unwrap();
                let delta = v["delta"].as_object().unwrap();
                members += usize::from(delta.keys().any(|k| !DELTA_MEMBERS.contains(&k.as_str())));
            }
            Some(name) => events += usize::from(!EVENTS.contains(&name)),
            None => {}
        }
    }
    (members, events)
}

/// WIRE-UNKNOWN in Bedrock: unknown delta members and unknown event types are
/// generated on purpose, each in at least 1% of a certification's cases at both levels, and
/// the reference skips them (the conformance test above runs the same cases).
#[test]
fn unknown_delta_members_and_event_types_are_generated() {
    for level in [Level::Wire, Level::Bytes] {
        let all = cases(level, 1000);
        let (mut members, mut events, mut exercised) = (0, 0, 0);
        for case in &all {
            let (m, e) = case.streams.iter().map(unknown_units).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
            members += usize::from(m > 0);
            events += usize::from(e > 0);
            let c = check(&toolcert::reference::ReferenceSubject, case, setting(level));
            assert!(c.violations.is_empty(), "{level:?} {}: {:?}", case.name, c.violations);
            if c.exercised.contains(Invariant::WireUnknown) {
                exercised += 1;
                assert!(m + e > 0, "{level:?} {}: exercised without a unit on the wire", case.name);
            }
        }
        assert!(members >= 10 && events >= 10, "{level:?}: {members} with a member, {events} with an event");
        assert!(exercised >= members.max(events), "{level:?}: {exercised} exercised WIRE-UNKNOWN");
    }
}

#[test]
fn the_unknown_fails_mutant_is_caught_as_wire_unknown_and_only_there() {
    let m = toolcert::mutants::by_name("bedrock-unknown-fails").unwrap();
    let subject = m.subject();
    for level in [Level::Wire, Level::Bytes] {
        let mut caught = 0;
        for mut case in cases(level, 200) {
            let v = check(&*subject, &case, setting(level)).violations;
            if !v.is_empty() {
                caught += 1;
                assert!(v.iter().all(|v| v.invariant == Invariant::WireUnknown), "{}: {v:?}", case.name);
            }
            // Without the units it is the reference.
            case.streams.iter_mut().for_each(|t| t.wire.unknown.clear());
            let v = check(&*subject, &case, setting(level)).violations;
            assert!(v.is_empty(), "{} fails without units of unknown types: {v:?}", case.name);
        }
        assert!(caught > 0, "{level:?}: not caught in 200 cases");
    }
}
