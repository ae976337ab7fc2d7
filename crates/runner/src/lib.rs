//! The runner: many cases against one subject, into a report.
//!
//! The last stage of the data flow before the facade. [`check_case`] renders a case, drives
//! the subject through it and asks the oracle for violations (re-running a failing stream of
//! a multi-stream case alone to tell shared state from a plain bug). [`Certification`] runs
//! the named cases and the generated ones at one setting and gathers a [`Report`];
//! [`Settings`] runs it at every setting a subject declares, and [`Combined`] judges them as
//! one run.

use std::borrow::Cow;

use proptest::strategy::ValueTree;
use toolcert_dialect::{render_wire, render_wire_bytes, BytesStream, WireStream};
use toolcert_gen::coverage::Coverage;
use toolcert_gen::strategy::CaseTree;
use toolcert_gen::{case_strategy, CoverageStats, GenConfig, ShapeMix};
use toolcert_oracle::{judge_case, judge_case_parsed, Exercised, Grade, Invariant, Profile, Violation};
use toolcert_render::{render, Rendered};
use toolcert_scenario::Case;
use toolcert_subject::driver::{drive, Input, Speech, Units};
use toolcert_subject::{Level, Observation, Subject};

pub mod baseline;
pub mod combined;
pub mod corpus;
pub mod cost;
pub mod diff;
pub mod findings;
pub mod formats;
mod jobs;
pub mod jsonl;
mod levels;
pub mod matrix;
mod merge;
mod minimize;
pub mod out;
pub mod regressions;
pub mod report;
pub mod served;
pub mod settings;
mod shard;
pub mod smoke;
pub mod suite;
pub mod tally;
pub mod tiers;
pub use combined::Combined;
pub use findings::{Bug, Finding, Signature, Size};
pub use jobs::MoreSubjects;
pub use merge::{merge, missing_shards, setting_key};
pub use report::{Broken, CaseRecord, CaseStatus, Failure, InvariantStatus, Report, Status, Verdict};
pub use settings::{Narrowing, ProfileChoice, Settings, SettingsError};
pub use shard::Shard;
pub use smoke::{smoke_with, SmokeLine, SmokeReport, SmokeStatus, SMOKE_CASES};
pub use tally::{Discard, RecordSink};

/// What running one case gave.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    pub violations: Vec<Violation>,
    pub observations: Vec<Observation>,
    /// The invariants the case could have broken (a rule no case exercised is `n/a`).
    pub exercised: Exercised,
    /// The case cannot be spoken at this level and dialect (it was not run).
    pub unsupported: Option<String>,
    /// What puts the case in a tier of its own (read here, where the scenario is whole: a
    /// job hands back a passing case without its streams).
    pub class: tiers::CaseClass,
    /// The strict parses of call documents the oracle made, for the coverage classifier
    /// ([`toolcert_gen::classify_with`]) to read instead of parsing them again.
    pub parsed: toolcert_oracle::Parsed,
}

/// Where a case is fed: the level, and the dialect the wire and bytes levels speak.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub profile: Profile,
    pub level: Level,
    pub speech: Speech,
    /// Below the events level, re-run a failing case with wire or bytes features removed to
    /// name the rule it hinges on (WIRE-*, BYTES-*).
    pub attribute: bool,
    /// Re-run a passing case delivered whole and require the same observation (ACC-CHUNKING).
    pub chunking: bool,
}

impl Default for Setting {
    fn default() -> Self {
        Setting {
            profile: Profile::default(),
            level: Level::Events,
            speech: Speech::default(),
            attribute: true,
            chunking: true,
        }
    }
}

impl Setting {
    /// The oracle's profile here: the subject's, and whether the server is a hostile
    /// upstream (docs/SPEC.md, "The hostile upstream": a clean refusal of its streams passes).
    pub fn oracle_profile(&self) -> Profile {
        let hostile = self.level != Level::Events && self.speech.quirks.hostile;
        Profile { hostile: self.profile.hostile || hostile, ..self.profile }
    }

    /// The events level with this profile.
    pub fn events(profile: Profile) -> Setting {
        Setting { profile, ..Setting::default() }
    }
}

/// `case` with every stream lowered to `dialect` (`DialectDef::lower_turn`): written in
/// either shape, sent as the dialect sends it, with the same meaning. `Err` names what the
/// dialect's wire lacks to carry it (and the stream, in a case of several).
pub fn lower_case(case: &Case, dialect: toolcert_scenario::Dialect) -> Result<Case, String> {
    let def = toolcert_dialect::def(dialect);
    let several = case.streams.len() > 1;
    let streams = case
        .streams
        .iter()
        .enumerate()
        .map(|(s, t)| {
            def.lower_turn(t).map_err(|e| if several { format!("{e} (stream {})", s + 1) } else { e })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Case { name: case.name.clone(), streams, schedule: case.schedule.clone() })
}

/// Renders `case` at the events level, feeds it to a fresh factory of `subject` and judges
/// what it reported.
pub fn check_case(subject: &dyn Subject, case: &Case, profile: Profile) -> Checked {
    check(subject, case, Setting::events(profile))
}

/// A stream rendered below the events level: the units fed, with how many neutral events
/// each unit completes (the oracle reads neutral events).
struct Lowered<'n, 'a> {
    neutral: &'n Rendered<'a>,
    wire: Option<WireStream>,
    bytes: Option<BytesStream>,
}

impl Lowered<'_, '_> {
    fn input(&self) -> Input<'_> {
        let units = match (&self.bytes, &self.wire) {
            (Some(b), _) => Units::Bytes(&b.chunks),
            (None, Some(w)) => Units::Wire(&w.events),
            (None, None) => Units::Events(&self.neutral.events),
        };
        Input { units, end: self.neutral.end }
    }

    /// Neutral events delivered once `units` units have been.
    fn neutral_upto(&self, units: u32) -> u32 {
        let upto = match (&self.bytes, &self.wire) {
            (Some(b), _) => &b.upto,
            (None, Some(w)) => &w.upto,
            (None, None) => return units,
        };
        match units {
            0 => 0,
            n => upto.get(n as usize - 1).or(upto.last()).copied().unwrap_or(0),
        }
    }
}

/// The generated cases of the verdict sample ([`Certification::verdict_sample`]).
pub const VERDICT_SAMPLE: usize = 32;

fn lower<'n, 'a>(
    turn: &toolcert_scenario::Turn,
    neutral: &'n Rendered<'a>,
    setting: Setting,
) -> Result<Lowered<'n, 'a>, String> {
    if setting.level == Level::Events {
        if turn.wire.spliced.is_some() {
            // The oracle would await a fault that only the wire can carry.
            return Err("the events level has no start event: a second generation spliced into a \
                        stream (`message_start`, `response.created` again) is a wire fault"
                .into());
        }
        if turn.wire.hostile_index.is_some() {
            return Err("the events level has no index of its own: a hostile index (`\"__proto__\"`, \
                        `-1`) in a call's fragment is a wire fault"
                .into());
        }
        return Ok(Lowered { neutral, wire: None, bytes: None });
    }
    let (dialect, quirks) = (setting.speech.dialect, setting.speech.quirks);
    // The bytes level feeds bytes only: framed as the events are rendered, where the
    // dialect can, with no wire stream kept.
    if setting.level == Level::Bytes {
        let bytes = render_wire_bytes(turn, neutral, dialect, quirks).map_err(|e| e.to_string())?;
        return Ok(Lowered { neutral, wire: None, bytes: Some(bytes) });
    }
    let wire = render_wire(turn, neutral, dialect, quirks).map_err(|e| e.to_string())?;
    Ok(Lowered { neutral, wire: Some(wire), bytes: None })
}

/// Renders `case` at the setting's level, feeds it to a fresh factory of `subject` and judges
/// what it reported; stamps are mapped back to neutral events before judging.
pub fn check(subject: &dyn Subject, case: &Case, setting: Setting) -> Checked {
    check_inner(subject, case, setting, false).0
}

/// [`check`], and the case classified for the coverage report
/// ([`toolcert_gen::classify_with`]), reading the renderings and the documents the check made.
pub fn check_classified(
    subject: &dyn Subject,
    case: &Case,
    setting: Setting,
) -> (Checked, toolcert_gen::Coverage) {
    let (checked, coverage) = check_inner(subject, case, setting, true);
    (checked, coverage.expect("classified when asked"))
}

fn check_inner(
    subject: &dyn Subject,
    original: &Case,
    setting: Setting,
    classify: bool,
) -> (Checked, Option<toolcert_gen::Coverage>) {
    let shaped = shape_case(original, setting);
    let original = shaped.as_ref().unwrap_or(original);
    let corrupt = original.streams.iter().any(|t| t.transport.corrupt.is_some());
    let placed;
    let case = if corrupt {
        placed = place_corrupt(original, setting);
        &placed
    } else {
        original
    };
    let neutral: Vec<Rendered<'_>> = case.streams.iter().map(render).collect();
    // Coverage counts the case as given: a placed copy's renderings are not its own (its
    // blocks, and so the documents parsed, are).
    let coverage = |parsed: &toolcert_oracle::Parsed, observed: &[Observation]| {
        classify.then(|| {
            toolcert_gen::classify_with(
                original,
                &|s, b| parsed.get(observed, s, b),
                (!corrupt).then_some(&neutral[..]),
            )
        })
    };
    let lowered: Result<Vec<_>, String> =
        case.streams.iter().zip(&neutral).map(|(t, n)| lower(t, n, setting)).collect();
    let lowered = match lowered {
        Ok(l) => l,
        Err(reason) => {
            let coverage = coverage(&Default::default(), &[]);
            return (Checked { unsupported: Some(reason), ..Checked::default() }, coverage);
        }
    };
    let observations = observe(subject, case, &lowered, setting);
    let (mut violations, mut exercised, parsed) =
        judge_case_parsed(case, &neutral, &observations, setting.oracle_profile());
    exercised = exercised.union(levels::exercised(case, &lowered, setting));
    if case.streams.len() > 1 && !violations.is_empty() {
        isolate(subject, case, setting, &mut violations);
    }
    if setting.attribute && setting.level != Level::Events && !violations.is_empty() {
        levels::attribute(subject, case, setting, &mut violations);
    }
    if violations.is_empty()
        && setting.chunking
        && chunk_invariance(subject, case, setting, &observations, &mut violations)
    {
        exercised.insert(Invariant::AccChunking);
    }
    let mut coverage = coverage(&parsed, &observations);
    if let (Some(c), Some(shown)) =
        (&mut coverage, classify.then(|| profile_shown(original, setting)).flatten())
    {
        c.profile = Some((setting.speech.quirks, shown));
    }
    let class = tiers::CaseClass::of(original);
    (Checked { violations, observations, exercised, unsupported: None, class, parsed }, coverage)
}

/// The server-profile behaviours `case`'s streams (shaped for the setting) show as the setting renders them, read back
/// by [`toolcert_dialect::profiles::ProfileDetector`]; `None` where the setting is at its
/// provider's own profile or at the events level (nothing to count). Rendered a second time
/// for this, in profile settings only: the hot path at the plain settings pays nothing.
fn profile_shown(case: &Case, setting: Setting) -> Option<toolcert_scenario::Quirks> {
    if setting.level == Level::Events || setting.speech.quirks.is_plain() {
        return None;
    }
    let dialect = setting.speech.dialect;
    let mut shown = toolcert_scenario::Quirks::PLAIN;
    for turn in &case.streams {
        let Ok(wire) = render_wire(turn, &render(turn), dialect, setting.speech.quirks) else { continue };
        let turn_shown = toolcert_dialect::profiles::ProfileDetector::shown_by(dialect, &wire);
        for flag in turn_shown.set() {
            shown = shown.with(flag).expect("a flag the detector sets is a flag");
        }
    }
    Some(shown)
}

/// What `subject` reports for `case` at `setting`, unjudged (nothing, if the case cannot be
/// spoken there); the case carries no corrupt message (its placement is `check`'s).
fn observe_case(subject: &dyn Subject, case: &Case, setting: Setting) -> Vec<Observation> {
    let shaped = shape_case(case, setting);
    let case = shaped.as_ref().unwrap_or(case);
    let neutral: Vec<Rendered<'_>> = case.streams.iter().map(render).collect();
    let lowered: Result<Vec<_>, String> =
        case.streams.iter().zip(&neutral).map(|(t, n)| lower(t, n, setting)).collect();
    match lowered {
        Ok(lowered) => observe(subject, case, &lowered, setting),
        Err(_) => Vec::new(),
    }
}

/// Below the events level, `case` as the setting's dialect carries it when that differs
/// ([`toolcert_dialect::DialectDef::shape_turn`]: Gemini's documents written as its pieces
/// write them back); `None`: the case itself. What is checked and judged is the shaped case.
pub fn shape_case(case: &Case, setting: Setting) -> Option<Case> {
    if setting.level == Level::Events {
        return None;
    }
    let def = toolcert_dialect::def(setting.speech.dialect);
    let shaped: Vec<Option<toolcert_scenario::Turn>> =
        case.streams.iter().map(|t| def.shape_turn(t, setting.speech.quirks)).collect();
    if shaped.iter().all(Option::is_none) {
        return None;
    }
    let streams =
        shaped.into_iter().zip(&case.streams).map(|(s, t)| s.unwrap_or_else(|| t.clone())).collect();
    Some(Case { name: case.name.clone(), streams, schedule: case.schedule.clone() })
}

/// `case` with each [`toolcert_scenario::Corrupt`] message where it is rendered: dropped
/// below a binary-framed dialect's bytes level (nothing renders it there), and otherwise
/// placed at exactly the neutral events complete before the damaged message, which is what
/// the oracle reads (the same message is damaged either way).
pub(crate) fn place_corrupt(case: &Case, setting: Setting) -> Case {
    let mut case = case.clone();
    for turn in &mut case.streams {
        let Some(c) = turn.transport.corrupt else { continue };
        let def = toolcert_dialect::def(setting.speech.dialect);
        let neutral = render(turn);
        let placed = match render_wire(turn, &neutral, setting.speech.dialect, setting.speech.quirks) {
            Ok(wire) if setting.level == Level::Bytes => def.damaged_before(&wire, c),
            // Unrendered: nothing to place (the run reports the turn unsupported).
            Err(_) if setting.level == Level::Bytes && def.binary() => Some(c.after),
            _ => None,
        };
        turn.transport.corrupt = placed.map(|after| toolcert_scenario::Corrupt { after, ..c });
    }
    case
}

/// Adds `(note)` to a violation's observed side, on its first line (a diff window with its
/// caret line may follow).
pub(crate) fn annotate(observed: &mut String, note: &str) {
    let at = observed.find('\n').unwrap_or(observed.len());
    observed.insert_str(at, &format!(" ({note})"));
}

/// The crash of a differential re-run, as SUBJECT-CRASH naming the re-run: a subject that
/// dies while being re-checked crashed; it did not break the rule the re-run was checking.
pub(crate) fn rerun_crash(observations: &[Observation], rerun: &str) -> Option<Violation> {
    observations.iter().enumerate().find_map(|(s, o)| {
        o.crash.as_ref().map(|crash| Violation {
            invariant: Invariant::SubjectCrash,
            grade: Grade::Must,
            stream: s as u32,
            call_id: None,
            kind: "the subject crashed".into(),
            expected: "no crash".into(),
            observed: format!("the subject crashed during the {rerun} re-run: {crash}"),
        })
    })
}

/// The central property: the same turn delivered whole (every text and argument string in
/// one fragment) must give the same observation, outcome for outcome. Only for turns whose
/// event positions do not depend on the fragmentation (no faults, a stop reason). Whether it
/// applied (so ACC-CHUNKING was exercised).
fn chunk_invariance(
    subject: &dyn Subject,
    case: &Case,
    setting: Setting,
    observed: &[Observation],
    violations: &mut Vec<Violation>,
) -> bool {
    use toolcert_scenario::{Block, Ending};
    // Concurrent schedules and fault positions (a spliced generation's too) count events, so
    // they shift with the fragmentation; so does the order of pieces of different blocks in
    // the interleaved shape (compared below as outcome sets, without the text).
    let applies = matches!(case.schedule, toolcert_scenario::StreamSchedule::Sequential)
        && case.streams.iter().all(|t| {
            t.faults.is_empty()
                && t.transport.corrupt.is_none()
                && t.wire.spliced.is_none()
                && t.wire.hostile_index.is_none()
                && matches!(t.ending, Ending::Stop(_))
        });
    let fragmented = case.streams.iter().flat_map(|t| &t.blocks).any(|b| match b {
        Block::Call(c) => !c.splits.is_empty(),
        Block::Text(t) => !t.splits.is_empty(),
        Block::Foreign(f) => !f.splits.is_empty(),
    });
    if !applies || !fragmented {
        return false;
    }
    let mut whole = case.clone();
    for b in whole.streams.iter_mut().flat_map(|t| &mut t.blocks) {
        match b {
            Block::Call(c) => c.splits.clear(),
            Block::Text(t) => t.splits.clear(),
            Block::Foreign(f) => f.splits.clear(),
        }
    }
    // Only what the subject reported is compared: the re-run is not judged.
    let again = observe_case(subject, &whole, Setting { chunking: false, ..setting });
    if let Some(crash) = rerun_crash(&again, "delivered-whole (ACC-CHUNKING)") {
        // The comparison never happened: ACC-CHUNKING was not exercised by this case.
        violations.push(crash);
        return false;
    }
    for (s, (a, b)) in observed.iter().zip(&again).enumerate() {
        let per_call = matches!(case.streams[s].shape, toolcert_scenario::Shape::PerCall);
        // Compared as values (serialising every outcome of both runs cost a tenth of all
        // the harness's instructions); serialised only to say how they differ.
        if same_observation(a, b, per_call) {
            continue;
        }
        let summary = |o: &Observation| {
            let mut outcomes: Vec<String> =
                o.outcomes.iter().map(|t| serde_json::to_string(&t.value).unwrap_or_default()).collect();
            if !per_call {
                outcomes.sort();
            }
            let text = if per_call { o.text.clone() } else { String::new() };
            let ending = o.ending.as_ref().map(|e| (e.value.ending, e.value.stop_reason.clone()));
            (outcomes, text, o.error.as_ref().map(|e| e.value.class), ending)
        };
        if summary(a) != summary(b) {
            violations.push(Violation {
                invariant: Invariant::AccChunking,
                grade: toolcert_oracle::Grade::Must,
                stream: s as u32,
                call_id: None,
                kind: "the fragmented turn gives another observation than the turn delivered whole".into(),
                expected: format!("as delivered whole: {:?}", summary(b)),
                observed: format!("as fragmented: {:?}", summary(a)),
            });
        }
    }
    true
}

/// Whether two observations of one stream agree as the chunk invariance compares them: the
/// outcomes (in order for the per-call shape, as a multiset for the interleaved one), the
/// text (per-call shape only) and the error class.
fn same_observation(a: &Observation, b: &Observation, per_call: bool) -> bool {
    if a.outcomes.len() != b.outcomes.len()
        || a.error.as_ref().map(|e| e.value.class) != b.error.as_ref().map(|e| e.value.class)
    {
        return false;
    }
    if per_call {
        return a.text == b.text && a.outcomes.iter().zip(&b.outcomes).all(|(x, y)| x.value == y.value);
    }
    // A multiset comparison: each outcome of `a` takes one equal outcome of `b` not yet taken.
    let mut taken = vec![false; b.outcomes.len()];
    a.outcomes.iter().all(|x| {
        let hit = b.outcomes.iter().enumerate().find(|(j, y)| !taken[*j] && y.value == x.value);
        hit.map(|(j, _)| taken[j] = true).is_some()
    })
}

/// Drives a fresh factory through the streams; stamps in neutral events.
fn observe(
    subject: &dyn Subject,
    case: &Case,
    lowered: &[Lowered<'_, '_>],
    setting: Setting,
) -> Vec<Observation> {
    let inputs: Vec<Input<'_>> = lowered.iter().map(Lowered::input).collect();
    let mut observations = subject
        .observe(case, &inputs, setting.speech)
        .unwrap_or_else(|| drive(&*subject.factory(), case, &inputs, setting.speech));
    if setting.level != Level::Events {
        for (obs, l) in observations.iter_mut().zip(lowered) {
            let map = |at: &mut toolcert_subject::Stamp| {
                at.before = l.neutral_upto(at.before);
                at.delivered = l.neutral_upto(at.delivered);
            };
            obs.outcomes.iter_mut().for_each(|o| map(&mut o.at));
            if let Some(e) = &mut obs.error {
                map(&mut e.at);
            }
            if let Some(e) = &mut obs.ending {
                map(&mut e.at);
            }
        }
    }
    observations
}

/// A stream that fails only in company shares state with its neighbours: its violations
/// are ACC-ISOLATION, whatever they looked like.
fn isolate(subject: &dyn Subject, case: &Case, setting: Setting, violations: &mut Vec<Violation>) {
    let mut failing: Vec<u32> = violations.iter().map(|v| v.stream).collect();
    failing.sort_unstable();
    failing.dedup();
    for s in failing {
        let alone = Case::single(case.name.clone(), case.streams[s as usize].clone());
        let neutral = render(&alone.streams[0]);
        let Ok(lowered) = lower(&alone.streams[0], &neutral, setting) else { continue };
        let obs = observe(subject, &alone, std::slice::from_ref(&lowered), setting);
        if let Some(mut crash) = rerun_crash(&obs, "isolation (ACC-ISOLATION, the stream alone)") {
            crash.stream = s;
            violations.push(crash);
            continue;
        }
        if judge_case(&alone, std::slice::from_ref(&neutral), &obs, setting.oracle_profile()).is_empty() {
            // A crash stays a crash: a fresh process passing alone says nothing of sharing.
            for v in violations.iter_mut().filter(|v| v.stream == s && v.invariant != Invariant::SubjectCrash)
            {
                annotate(&mut v.observed, "the stream alone conforms");
                v.invariant = Invariant::AccIsolation;
            }
        }
    }
}

/// A certification run's settings; [`Certification::run`] gives the report.
#[derive(Clone, Debug)]
pub struct Certification {
    /// Generated cases to run besides the named ones.
    pub cases: usize,
    pub seed: u64,
    /// Run the seeds' named cases first.
    pub named: bool,
    /// Only cases whose name contains this.
    pub filter: Option<String>,
    pub profile: Profile,
    /// The level the subject is fed at.
    pub level: Level,
    /// The dialect the wire and bytes levels speak.
    pub speech: Speech,
    /// The grade the subject must reach to conform.
    pub grade: Grade,
    /// The slice of the cases to run (default: all of them).
    pub shard: Shard,
    /// Cases that failed before (saved as values), run after the named ones.
    pub regressions: Vec<Case>,
    /// The most bytes a generated huge document has (`--args-size`; see
    /// [`GenConfig::max_args_size`]).
    pub args_size: usize,
    /// Where `--out` writes this setting's reproducers (`DIR`, holding `failures/`): a
    /// finding's replay command then replays its saved smallest reproducer, never a seed
    /// that would be generated and shrunk again.
    pub reproducers: Option<String>,
}

impl Default for Certification {
    fn default() -> Self {
        Certification {
            cases: 0,
            seed: 1,
            named: true,
            filter: None,
            profile: Profile { schema: true, ..Default::default() },
            level: Level::Events,
            speech: Speech::default(),
            grade: Grade::Should,
            shard: Shard::default(),
            regressions: Vec::new(),
            args_size: toolcert_gen::HUGE_DEFAULT_MAX,
            reproducers: None,
        }
    }
}

/// The first failing generated case of a hunt, shrunk.
#[derive(Clone, Debug)]
pub struct Found {
    /// Generated cases run up to and including the first failure.
    pub cases: usize,
    /// The invariants the first failure broke (before shrinking).
    pub first: Vec<Invariant>,
    /// The signatures of the first failure (before shrinking): the findings it showed.
    pub signatures: Vec<Signature>,
    /// The shrunk counterexample and its violations.
    pub case: Case,
    pub violations: Vec<Violation>,
}

/// Most shrink steps spent on one counterexample.
const SHRINK_LIMIT: usize = 4096;

/// Most value-level steps tried after the generator's shrinking.
const MINIMIZE_LIMIT: usize = 1024;

/// Most failing cases shrunk in one run (one per new signature): past it, findings are still
/// counted, with the first case as their replay.
const MAX_SHRINKS: usize = 64;

impl Certification {
    pub fn run(&self, subject: &dyn Subject) -> Report {
        self.run_with(subject, &mut |_, _| {})
    }

    /// The generator settings this run uses.
    pub fn gen_config(&self) -> GenConfig {
        let def = toolcert_dialect::def(self.speech.dialect);
        let interleaved = toolcert_scenario::Shape::Interleaved(Default::default());
        let shape_mix =
            match (self.level, def.carries(&toolcert_scenario::Shape::PerCall), def.carries(&interleaved)) {
                (Level::Events, _, _) | (_, true, true) => ShapeMix::Both,
                (_, false, true) => ShapeMix::Interleaved,
                _ => ShapeMix::PerCall,
            };
        GenConfig {
            schema: self.profile.schema,
            shape_mix,
            // Only a terminal that repeats the arguments (Responses) can disagree with them.
            done_mismatch: self.level == Level::Events || def.repeats_arguments(),
            transport: self.level == Level::Bytes,
            max_args_size: self.args_size,
            corrupt: self.level == Level::Bytes && toolcert_dialect::def(self.speech.dialect).binary(),
            // Only a dialect with a start event says a second generation began.
            spliced: self.level != Level::Events
                && def.reads(&toolcert_scenario::WireEvents { spliced: Some(0), ..Default::default() }),
            hostile: self.level != Level::Events && self.speech.quirks.hostile,
            ..GenConfig::default()
        }
    }

    /// The setting for generated case `k`: the delivered-whole re-run of the chunk
    /// invariance property doubles a passing case's cost, so it runs on one case in four
    /// (every named case gets it).
    fn sampled(&self, k: usize) -> Setting {
        Setting { chunking: k.is_multiple_of(4), ..self.setting() }
    }

    /// Where this run feeds the subject.
    pub fn setting(&self) -> Setting {
        Setting { profile: self.profile, level: self.level, speech: self.speech, ..Setting::default() }
    }

    /// Runs every case, calling `progress(done, total)` as it goes.
    pub fn run_with(&self, subject: &dyn Subject, progress: &mut dyn FnMut(usize, usize)) -> Report {
        self.run_jobs(subject, None, progress)
    }

    /// [`Certification::run_with`], checking the generated cases on `more.jobs` threads, each
    /// with a subject of its own from `more.make` (shrinking and recording stay on this
    /// thread, in case order: the report is the same for every job count).
    pub fn run_jobs(
        &self,
        subject: &dyn Subject,
        more: Option<&MoreSubjects<'_>>,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Report {
        self.run_into(subject, more, progress, None)
    }

    /// [`Certification::run_jobs`] in bounded memory: every case record goes to `sink` as it
    /// is made (after the header, before the footer: the JSONL stream, byte for byte what
    /// [`jsonl::to_jsonl`] writes for the same run), and the report keeps counts, findings,
    /// the failures kept in full and only the named, failing and skipped records (see
    /// [`tally`]). Such a report cannot be written as JSONL again: its sink was the stream.
    pub fn run_streamed(
        &self,
        subject: &dyn Subject,
        more: Option<&MoreSubjects<'_>>,
        progress: &mut dyn FnMut(usize, usize),
        sink: &mut dyn RecordSink,
    ) -> Report {
        self.run_into(subject, more, progress, Some(sink))
    }

    fn run_into(
        &self,
        subject: &dyn Subject,
        more: Option<&MoreSubjects<'_>>,
        progress: &mut dyn FnMut(usize, usize),
        mut sink: Option<&mut dyn RecordSink>,
    ) -> Report {
        let mut report = Report::new(subject, self);
        if let Some(sink) = sink.as_deref_mut() {
            report.streamed = Some(report::Streamed {
                span: Some((self.cases, self.shard, self.filter.clone())),
                ..Default::default()
            });
            sink.header(&report);
        }
        let stopped = std::cell::Cell::new(false);
        let mut hand_on = |report: &mut Report| {
            if let Some(sink) = sink.as_deref_mut() {
                report.hand_on(sink);
                stopped.set(sink.stopped());
            }
        };
        if self.named {
            for (i, named) in toolcert_gen::named::all().into_iter().enumerate() {
                if stopped.get() {
                    break;
                }
                if !self.shard.takes(i) || !self.wants(&named.case.name) || !self.runs_named(&named) {
                    continue;
                }
                match self.named_case(&named) {
                    Err(reason) => report.skip(i, &named.case.name, &reason),
                    Ok(case) => {
                        // The case as the setting runs it (lowered to its dialect) is what is
                        // judged, and what a failure keeps for replay.
                        let checked = check(subject, &case, self.setting());
                        if let Some(reason) = checked.unsupported {
                            report.skip(i, &named.case.name, &reason);
                        } else {
                            let kept = Some((&*case, checked.violations.clone()));
                            let (violations, exercised) = (&checked.violations, checked.exercised);
                            let class = checked.class;
                            report.record_run(&named.case.name, i, None, violations, exercised, class, kept);
                        }
                    }
                }
                hand_on(&mut report);
            }
        }
        let after_named = toolcert_gen::named::all().len();
        for (j, case) in self.regressions.iter().enumerate() {
            let i = after_named + j;
            if !self.shard.takes(i) || !self.wants(&case.name) {
                continue;
            }
            let checked = check(subject, case, self.setting());
            match checked.unsupported {
                Some(reason) => report.skip(i, &case.name, &reason),
                None => {
                    let kept = Some((case, checked.violations.clone()));
                    report.record_run(
                        &case.name,
                        i,
                        None,
                        &checked.violations,
                        checked.exercised,
                        checked.class,
                        kept,
                    )
                }
            }
            hand_on(&mut report);
        }
        self.generated(subject, more, &mut report, progress, &mut hand_on, &stopped);
        report.finish();
        if let Some(sink) = sink {
            sink.footer(&report);
        }
        report
    }

    /// Runs the generated cases: case `k` of seed `s` is named `gen/s/k`, derived from `s`
    /// and `k` alone, the same on every machine, in every shard and job. The first failing
    /// case of each new finding is shrunk keeping that finding's signature.
    fn generated(
        &self,
        subject: &dyn Subject,
        more: Option<&MoreSubjects<'_>>,
        report: &mut Report,
        progress: &mut dyn FnMut(usize, usize),
        hand_on: &mut dyn FnMut(&mut Report),
        stopped: &std::cell::Cell<bool>,
    ) {
        if self.cases == 0 {
            return;
        }
        let cfg = self.gen_config();
        let strategy = case_strategy(&cfg);
        let mut coverage = CoverageStats::new();
        let every = (self.cases / 200).max(1);
        let mut shrunk = 0;
        // This shard's cases only, never listed (a run of ten million keeps no list of them).
        let mut mine = (0..self.cases)
            .filter(|&k| self.shard.takes(k) && self.wants_generated(k))
            .take_while(|_| !stopped.get());
        // Each case is checked wherever a job is free; what is kept, shrunk and recorded is
        // decided here, in the order of `k`, so every job count gives the same report.
        let mut record =
            |k: usize, case: Case, classified: Option<Coverage>, checked: Checked, report: &mut Report| {
                let name = case.name.clone();
                match classified {
                    Some(c) => coverage.add(&c),
                    None => {
                        coverage.record_with(&case, &|s, b| checked.parsed.get(&checked.observations, s, b));
                    }
                }
                if let Some(reason) = checked.unsupported {
                    report.unsupported_case((self.seed, k), &name, &reason);
                    hand_on(report);
                    return;
                }
                let violations = checked.violations;
                // A signature no kept failure shows yet is a new bug: shrink this case keeping it
                // (Hypothesis-style), so every finding gets its own smallest reproducer.
                let new = Signature::all(&violations).into_iter().find(|sig| !report.reproduces(sig));
                let kept = match new {
                    _ if violations.is_empty() => None,
                    None => None,
                    Some(_) if shrunk >= MAX_SHRINKS => None,
                    // A crash is kept as generated: shrinking it would restart a crashing
                    // subprocess thousands of times, and the crash text already says what broke.
                    Some(_) if violations.iter().all(|v| v.invariant == Invariant::SubjectCrash) => {
                        Some((case.clone(), violations.clone()))
                    }
                    Some(sig) => {
                        shrunk += 1;
                        let mut tree = toolcert_gen::strategy::case_tree(&strategy, self.seed, k as u64);
                        Some(self.shrink_keeping(subject, &mut tree, case.clone(), violations.clone(), &sig))
                    }
                };
                report.record_run(
                    &name,
                    k,
                    Some(self.seed),
                    &violations,
                    checked.exercised,
                    checked.class,
                    kept.as_ref().map(|(c, v)| (c, v.clone())),
                );
                hand_on(report);
                if k.is_multiple_of(every) || k + 1 == self.cases {
                    progress(k + 1, self.cases);
                }
            };
        let jobs = more.map_or(1, |m| m.jobs.max(1));
        if jobs == 1 {
            for k in mine {
                let case = self.generated_case(&strategy, k);
                let (checked, classified) = check_classified(subject, &case, self.sampled(k));
                record(k, case, Some(classified), checked, report);
            }
        } else {
            let more = more.expect("jobs > 1 come with a way to make subjects");
            crate::jobs::check_in_parallel(
                self,
                &strategy,
                &mut mine,
                jobs,
                more,
                subject,
                &mut |k, case, cov, checked| record(k, case, cov, checked, report),
            );
        }
        self.keep_one_per_rule(subject, &strategy, report);
        report.coverage = Some(serde_json::to_value(&coverage).expect("coverage serialises"));
        report.coverage_text = Some(coverage.to_string());
    }

    /// Runs generated cases until the first failure (at most `self.cases`) and shrinks it,
    /// keeping one of `target` broken when the failure broke any of them.
    pub fn hunt(&self, subject: &dyn Subject, target: &[Invariant]) -> Option<Found> {
        let cfg = self.gen_config();
        let strategy = case_strategy(&cfg);
        for k in 0..self.cases {
            let mut tree = toolcert_gen::strategy::case_tree(&strategy, self.seed, k as u64);
            let mut case = tree.current();
            case.name = self.generated_name(k);
            let violations = check(subject, &case, self.sampled(k)).violations;
            if violations.is_empty() {
                continue;
            }
            let first: Vec<Invariant> = violations.iter().map(|v| v.invariant).collect();
            // The signature to keep: the first of an expected invariant, must before should.
            let signatures = Signature::all(&violations);
            let sigs = &signatures;
            let keep = sigs
                .iter()
                .filter(|s| target.contains(&s.invariant))
                .min_by_key(|s| s.grade)
                .or(sigs.iter().min_by_key(|s| s.grade))
                .cloned()
                .expect("a failing case has a signature");
            let (case, violations) = self.shrink_keeping(subject, &mut tree, case, violations, &keep);
            return Some(Found { cases: k + 1, first, signatures, case, violations });
        }
        None
    }

    /// Shrinks to a local minimum that still shows `keep` (the same invariant, grade and
    /// kind: a must failure never shrinks into a should one or into another bug): first the
    /// generator's own shrinking, then value-level steps the generator does not take
    /// (merging fragments, dropping blocks, streams, pings and bytes; see `minimize`).
    fn shrink_keeping(
        &self,
        subject: &dyn Subject,
        tree: &mut CaseTree,
        case: Case,
        violations: Vec<Violation>,
        keep: &Signature,
    ) -> (Case, Vec<Violation>) {
        let name = case.name.clone();
        let mut best = (case, violations);
        let mut steps = 0;
        let setting = self.setting();
        let shows = |candidate: &Case| {
            let v = check(subject, candidate, setting).violations;
            v.iter().any(|v| keep.matches(v)).then_some(v)
        };
        if tree.simplify() {
            loop {
                steps += 1;
                let mut candidate = tree.current();
                candidate.name.clone_from(&name);
                if let Some(v) = shows(&candidate) {
                    best = (candidate, v);
                    if steps >= SHRINK_LIMIT || !tree.simplify() {
                        break;
                    }
                } else if steps >= SHRINK_LIMIT || !tree.complicate() {
                    break;
                }
            }
        }
        minimize::minimize(best, &shows, MINIMIZE_LIMIT)
    }

    /// `gen/SEED/k`.
    fn generated_name(&self, k: usize) -> String {
        format!("gen/{}/{k}", self.seed)
    }

    /// Every rule a generated case broke keeps at least one failure in full: a rule none of
    /// whose failing cases was kept (past the run's shrinking budget) gets its first case not
    /// kept for another finding, shrunk keeping that rule's signature.
    fn keep_one_per_rule(
        &self,
        subject: &dyn Subject,
        strategy: &toolcert_gen::strategy::CaseStrategy,
        report: &mut Report,
    ) {
        let mut missing: Vec<(usize, Signature)> = Vec::new();
        for (at, r) in report.records.iter().enumerate() {
            if r.seed != Some(self.seed) || r.failure.is_some() {
                continue;
            }
            for sig in &r.signatures {
                let known = report.reproduces_invariant(sig.invariant)
                    || missing.iter().any(|(_, s)| s.invariant == sig.invariant);
                if !known {
                    missing.push((at, sig.clone()));
                }
            }
        }
        for (at, sig) in missing {
            if report.reproduces_invariant(sig.invariant) {
                continue;
            }
            let k = report.records[at].index;
            let case = self.generated_case(strategy, k);
            let violations = check(subject, &case, self.sampled(k)).violations;
            if !violations.iter().any(|v| sig.matches(v)) {
                continue;
            }
            let kept = if sig.invariant == Invariant::SubjectCrash {
                (case, violations)
            } else {
                let mut tree = toolcert_gen::strategy::case_tree(strategy, self.seed, k as u64);
                self.shrink_keeping(subject, &mut tree, case, violations, &sig)
            };
            report.keep(at, &kept.0, kept.1);
        }
    }

    /// Generated case `k` of this run's seed, named: derived from the seed and `k` alone.
    pub(crate) fn generated_case(&self, strategy: &toolcert_gen::strategy::CaseStrategy, k: usize) -> Case {
        toolcert_gen::strategy::generated_case(strategy, self.seed, k as u64, self.generated_name(k))
    }

    /// Named case `named` as this run's setting runs it, or why the setting leaves it out.
    /// Below the events level every stream is lowered to the setting's dialect
    /// ([`lower_case`]): the lowered case is what is checked, judged, reported and kept for
    /// replay, and a case whose meaning the dialect's wire cannot carry (a per-call terminal
    /// in OpenAI Chat, another dialect's events) is skipped with the reason that names what
    /// the wire lacks. A case added for one dialect therefore changes no other's suite.
    /// Whether this setting runs `named` at all: the hostile named cases run in the hostile
    /// profiles only, where they are neither skipped nor counted elsewhere.
    fn runs_named(&self, named: &toolcert_gen::named::NamedCase) -> bool {
        !toolcert_gen::named::is_hostile(named.id) || self.speech.quirks.hostile
    }

    fn named_case<'n>(&self, named: &'n toolcert_gen::named::NamedCase) -> Result<Cow<'n, Case>, String> {
        if named.needs_schema && !self.profile.schema {
            return Err("needs the schema profile".into());
        }
        if self.level == Level::Events {
            return Ok(Cow::Borrowed(&named.case));
        }
        lower_case(&named.case, self.speech.dialect).map(Cow::Owned)
    }

    /// The named cases this run's setting runs, in suite order, each as it runs them (lowered
    /// to its dialect below the events level): those it does not leave out and can render at
    /// its level and dialect. What the setting's suite digest covers (whatever `named`,
    /// `filter` and `shard` select of them).
    /// What decides this setting's verdicts, on a fixed sample: for each named case it runs
    /// and the first [`VERDICT_SAMPLE`] generated cases of seed 1, every stream as fed at
    /// the setting (neutral events, wire messages or bytes: the generator and the dialect),
    /// the oracle's expectation derived from it, and the oracle's verdict on an observation
    /// that reports nothing (the rules). Its SHA-256 is part of the suite digest
    /// ([`suite::Suite`]), so a change to the oracle, a generator or a dialect that would
    /// change a verdict of the setting stales its reports.
    pub fn verdict_sample(&self) -> Vec<u8> {
        self.verdict_sample_judged(judge_case)
    }

    /// [`Certification::verdict_sample`] with the oracle's judge given: a changed judge is a
    /// changed oracle (the test that the digest covers the oracle uses one).
    pub fn verdict_sample_judged(
        &self,
        judge: fn(&Case, &[Rendered<'_>], &[Observation], Profile) -> Vec<Violation>,
    ) -> Vec<u8> {
        use sha2::{Digest, Sha256};
        let setting = self.setting();
        let strategy = case_strategy(&self.gen_config());
        let generated = (0..VERDICT_SAMPLE).map(|k| {
            let mut case = toolcert_gen::strategy::case_tree(&strategy, 1, k as u64).current();
            case.name = format!("gen/1/{k}");
            case
        });
        let named = self.suite_named().into_iter().map(|n| n.case);
        let mut h = Sha256::new();
        for case in named.chain(generated) {
            h.update(case.name.as_bytes());
            h.update([0]);
            let neutral: Vec<Rendered<'_>> = case.streams.iter().map(render).collect();
            for (turn, n) in case.streams.iter().zip(&neutral) {
                match lower(turn, n, setting) {
                    Err(e) => h.update(e.as_bytes()),
                    Ok(l) => {
                        if let Some(bytes) = &l.bytes {
                            h.update(bytes.chunks.concat());
                        } else if let Some(wire) = &l.wire {
                            h.update(serde_json::to_vec(&wire.events).unwrap_or_default());
                        } else {
                            h.update(serde_json::to_vec(&n.events).unwrap_or_default());
                        }
                    }
                }
                let exp = toolcert_oracle::expect(turn, n, self.profile);
                let file = toolcert_oracle::corpus::ExpectationFile::from_expected(
                    &case.name,
                    setting.speech.dialect.name(),
                    turn,
                    n.end,
                    &exp,
                );
                h.update(serde_json::to_vec(&file).unwrap_or_default());
            }
            let nothing = vec![Observation::default(); case.streams.len()];
            for v in judge(&case, &neutral, &nothing, self.profile) {
                h.update(
                    format!("{}|{}|{}|{}\n", v.invariant.id(), v.grade.as_str(), v.kind, v.stream).as_bytes(),
                );
            }
        }
        h.finalize().to_vec()
    }

    pub fn suite_named(&self) -> Vec<toolcert_gen::named::NamedCase> {
        let setting = self.setting();
        let speaks = |t: &toolcert_scenario::Turn| lower(t, &render(t), setting).is_ok();
        toolcert_gen::named::all()
            .into_iter()
            .filter(|n| self.runs_named(n))
            .filter_map(|n| {
                let case = self.named_case(&n).ok()?.into_owned();
                case.streams.iter().all(speaks).then_some(toolcert_gen::named::NamedCase { case, ..n })
            })
            .collect()
    }

    fn wants(&self, name: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| name.contains(f))
    }

    /// [`Certification::wants`] of generated case `k`, naming it only when there is a filter.
    fn wants_generated(&self, k: usize) -> bool {
        self.filter.is_none() || self.wants(&self.generated_name(k))
    }
}
