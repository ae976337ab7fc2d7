//! Findings: the distinct bugs behind a run's failing cases.
//!
//! A violation's [`Signature`] is its invariant, its grade and its kind (what went wrong, in
//! words that name no id, argument or position: the oracle writes it). Every failing case
//! counts once toward each signature it showed; a [`Finding`] is one signature with its
//! count, the first case that showed it, its smallest reproducer (shrunk keeping that very
//! signature) and the command that replays it. The id hashes the signature only, so the
//! same bug gets the same id across seeds, case counts, runs and settings.
//!
//! Derived from the per-case records by [`crate::Report::finish`], like every other count,
//! so findings merge with the reports of shards and seeds.

use serde::{Deserialize, Serialize};
use toolcert_oracle::{Grade, Invariant, Violation};
use toolcert_scenario::{Block, Case};

use crate::report::Failure;

/// What identifies one bug: the invariant, the grade and the kind of failure.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Signature {
    pub invariant: Invariant,
    pub grade: Grade,
    pub kind: String,
}

impl Signature {
    pub fn of(v: &Violation) -> Signature {
        Signature { invariant: v.invariant, grade: v.grade, kind: v.kind.clone() }
    }

    /// The distinct signatures of `violations`, sorted (must before should per invariant).
    pub fn all(violations: &[Violation]) -> Vec<Signature> {
        let mut out: Vec<Signature> = violations.iter().map(Signature::of).collect();
        out.sort();
        out.dedup();
        out
    }

    pub fn matches(&self, v: &Violation) -> bool {
        v.invariant == self.invariant && v.grade == self.grade && v.kind == self.kind
    }

    /// `ACC-IDENTITY#1f2e3d4c`: the invariant, and a hash of the whole signature that is the
    /// same on every machine (FNV-1a, 32 bits).
    pub fn id(&self) -> String {
        let mut h: u32 = 0x811c_9dc5;
        for b in self
            .invariant
            .id()
            .bytes()
            .chain([0])
            .chain(self.grade.as_str().bytes())
            .chain([0])
            .chain(self.kind.bytes())
        {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        format!("{}#{h:08x}", self.invariant.id())
    }

    /// One line a maintainer reads: `ACC-IDENTITY (must): two calls to the same tool merged into one`.
    pub fn title(&self) -> String {
        let kind = if self.kind.is_empty() { self.invariant.rule() } else { self.kind.as_str() };
        format!("{} ({}): {kind}", self.invariant.id(), self.grade.as_str())
    }
}

/// How big a reproducer is, for choosing the smallest and for the zoo's table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Size {
    /// Provider-neutral events over all streams.
    pub events: usize,
    /// Non-empty argument and text fragments.
    pub fragments: usize,
    /// Argument and text bytes.
    pub bytes: usize,
}

impl Size {
    pub fn of(case: &Case) -> Size {
        let mut size = Size::default();
        for turn in &case.streams {
            size.events += toolcert_render::render(turn).events.len();
            for b in &turn.blocks {
                let (text, splits) = match b {
                    Block::Call(c) => (&c.arguments, &c.splits),
                    Block::Text(t) => (&t.text, &t.splits),
                    Block::Foreign(f) => (&f.text, &f.splits),
                };
                size.bytes += text.len();
                size.fragments +=
                    toolcert_scenario::fragments(text, splits).filter(|(_, f)| !f.is_empty()).count();
            }
        }
        size
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = |k: usize, one: &str, many: &str| crate::report::plural(k, one, many);
        write!(
            f,
            "{}, {}, {}",
            n(self.events, "event", "events"),
            n(self.fragments, "fragment", "fragments"),
            n(self.bytes, "byte", "bytes")
        )
    }
}

/// One distinct bug of the subject.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable across seeds, case counts and runs: [`Signature::id`].
    pub id: String,
    pub invariant: Invariant,
    pub grade: Grade,
    /// What went wrong, without values.
    pub kind: String,
    pub title: String,
    /// Cases that showed it (as run, before shrinking).
    pub cases: usize,
    /// The first case (in run order) that showed it.
    pub first_case: String,
    /// The settings it was found in (`events`, `bytes (openai-chat)`), for reports over
    /// several settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// The smallest failure kept in full that shows it (for a generated case, shrunk keeping
    /// this very signature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<Failure>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Size>,
    /// The command that runs the reproducer again.
    pub replay: String,
}

impl Finding {
    pub fn signature(&self) -> Signature {
        Signature { invariant: self.invariant, grade: self.grade, kind: self.kind.clone() }
    }

    /// Whether it counts when `grade` is required.
    pub fn counts(&self, grade: Grade) -> bool {
        grade == Grade::Should || self.grade == Grade::Must
    }
}

/// One bug of the subject: the findings (its symptoms) that one cause explains.
///
/// Findings are one bug when they failed on the same cases, when one shrunk reproducer is
/// the smallest of both, when one is the consequence of another (every case that showed it
/// also showed the other, and its own smallest reproducer shows the other too), when they
/// are the same thing gone wrong at two grades, or when they break one rule on triggers that
/// carry the same stream faults, or none (docs/SPEC.md, "Bugs"). The bug's id hashes
/// what went wrong at its root (the most serious symptom that failed the most cases) and the shape of the root's shrunk trigger ([`trigger_shape`]),
/// never an invariant's grade or the wording around it: the same bug keeps its id under
/// both caller policies, every server profile and the next SDK version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bug {
    /// `BUG-1f2e3d4c`.
    pub id: String,
    /// The root symptom's title.
    pub title: String,
    /// The most serious grade among its symptoms.
    pub grade: Grade,
    /// The invariant its root symptom breaks.
    pub invariant: Invariant,
    /// Cases that showed its root symptom.
    pub cases: usize,
    /// The shape of the root's smallest reproducer, in words (`2 calls, same tool; complete`).
    pub trigger: String,
    /// Its symptoms: finding ids, the root first.
    pub symptoms: Vec<String>,
    /// The settings it was found in, for reports over several settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// The command that replays the root's smallest reproducer.
    pub replay: String,
}

impl Bug {
    /// Whether it counts when `grade` is required.
    pub fn counts(&self, grade: Grade) -> bool {
        grade == Grade::Should || self.grade == Grade::Must
    }

    /// One line: `BUG-1f2e3d4c  42 cases  ACC-IDENTITY: two calls to the same tool merged into one`.
    pub fn line(&self) -> String {
        let more = match self.symptoms.len() {
            1 => String::new(),
            n => format!(" (+{} symptoms)", n - 1),
        };
        format!(
            "{:<13} {:>6} {}  {}{more}",
            self.id,
            self.cases,
            if self.cases == 1 { "case " } else { "cases" },
            self.title
        )
    }
}

/// The shape of a shrunk trigger in words: per stream, how many calls (and whether two name
/// the same tool), how it ended, the stream faults and the framing, and nothing that a
/// shrinker picks arbitrarily (names, ids, argument text, split positions).
pub fn trigger_shape(case: &Case) -> String {
    use toolcert_scenario::LineEnd;
    let mut parts = Vec::new();
    if case.streams.len() > 1 {
        parts.push(format!("{} streams", case.streams.len()));
    }
    for turn in &case.streams {
        let names: Vec<&str> = turn
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Call(c) => Some(c.name.as_str()),
                _ => None,
            })
            .collect();
        let mut shape = match names.len() {
            0 => "no call".to_string(),
            1 => "1 call".to_string(),
            n => format!("{} calls", n.min(3)),
        };
        let mut distinct = names.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < names.len() {
            shape += ", same tool";
        }
        let ending = match turn.ending.kind() {
            toolcert_scenario::EndingKind::Complete => "complete",
            toolcert_scenario::EndingKind::Truncated => "truncated",
            toolcert_scenario::EndingKind::Abandoned => "abandoned",
            toolcert_scenario::EndingKind::Errored => "errored",
        };
        shape += &format!("; {ending}");
        let mut faults: Vec<String> = turn
            .faults
            .iter()
            .map(|f| match serde_json::to_value(&f.kind) {
                Ok(serde_json::Value::String(s)) => s,
                Ok(serde_json::Value::Object(m)) => m.keys().next().cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .collect();
        faults.sort();
        faults.dedup();
        if !faults.is_empty() {
            shape += &format!("; fault {}", faults.join("+"));
        }
        match turn.transport.line_end {
            LineEnd::Lf => {}
            LineEnd::CrLf => shape += "; CRLF",
            LineEnd::Cr => shape += "; CR",
        }
        parts.push(shape);
    }
    parts.join(" | ")
}

/// What of a trigger's shape names a cause beyond the rule broken: the stream faults it
/// carries (a client that mishandles a replayed announcement and one that mishandles a
/// fragment after a stop have two bugs). How many calls, how the turn ended and how it was
/// framed are where a shrinker happened to stop.
fn shape_core(shape: &str) -> String {
    let mut faults: Vec<&str> =
        shape.split(" | ").flat_map(|turn| turn.split("; ")).filter(|p| p.starts_with("fault ")).collect();
    faults.sort_unstable();
    faults.dedup();
    faults.join(" ")
}

/// The bugs behind `findings`. `together(a, b)`: the cases that showed both signatures;
/// `shown(f)`: the signatures its smallest reproducer shows (empty without one); `shape(f)`:
/// its trigger's shape ([`trigger_shape`], `None` without a reproducer).
pub fn group_bugs(
    findings: &[Finding],
    together: impl Fn(&Signature, &Signature) -> usize,
    shown: impl Fn(&Finding) -> Vec<Signature>,
    shape: impl Fn(&Finding) -> Option<String>,
) -> Vec<Bug> {
    let n = findings.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let sigs: Vec<Signature> = findings.iter().map(Finding::signature).collect();
    let cores: Vec<Option<String>> = findings.iter().map(|f| shape(f).map(|s| shape_core(&s))).collect();
    let shows: Vec<Vec<Signature>> = findings.iter().map(&shown).collect();
    for a in 0..n {
        for b in 0..n {
            if a == b {
                continue;
            }
            let both = together(&sigs[a], &sigs[b]);
            let (fa, fb) = (&findings[a], &findings[b]);
            let same_cases = both == fa.cases && both == fb.cases;
            let same_reproducer = matches!((&fa.reproducer, &fb.reproducer),
                (Some(x), Some(y)) if x.case == y.case);
            // a follows from b: never without it, and its own smallest trigger shows b too.
            let consequence = both == fa.cases && shows[a].contains(&sigs[b]);
            // The same thing gone wrong at another grade: the grade comes from the case's
            // ending (a merge on a complete stream is must, on a cut one should), not the cause.
            let regraded = fa.invariant == fb.invariant && fa.kind == fb.kind;
            // One rule broken by triggers with the same faults (or none): what the oracle says
            // went wrong names the ending and the outcome seen, the cause is one.
            let same_trigger = fa.invariant == fb.invariant && cores[a].is_some() && cores[a] == cores[b];
            if same_cases || same_reproducer || consequence || regraded || same_trigger {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                parent[ra] = rb;
            }
        }
    }
    // A finding the rules above left alone joins the one bug that explains it, if exactly one
    // does: the same thing gone wrong under another rule, or with other words only for what
    // the case happened to be (a call with no outcome is ACC-ACCOUNT on a complete turn and
    // ACC-TRUNCATION on a cut one); or a cause the oracle's own words name. Bugs the rules
    // above formed are never joined to each other here: a real subject's two bugs share
    // symptoms of these kinds, and one lone symptom must not bridge them.
    let before: Vec<usize> = (0..n).map(|i| root(&mut parent, i)).collect();
    let alone: Vec<bool> = (0..n).map(|i| before.iter().filter(|&&r| r == before[i]).count() == 1).collect();
    let families: Vec<String> = findings.iter().map(|f| family(&f.kind)).collect();
    let causes: Vec<Cause<'_>> = findings.iter().map(|f| Cause::of(&f.kind)).collect();
    // The one bug (as formed above) holding a finding `want` accepts, other than `a`'s own.
    let only = |a: usize, want: &dyn Fn(usize) -> bool| -> Option<usize> {
        let mut roots: Vec<usize> =
            (0..n).filter(|&b| before[b] != before[a] && want(b)).map(|b| before[b]).collect();
        roots.sort_unstable();
        roots.dedup();
        match roots[..] {
            [r] => Some(r),
            _ => None,
        }
    };
    for a in (0..n).filter(|&a| alone[a]) {
        let inv = findings[a].invariant;
        let same = |b: usize, c: Cause<'_>| findings[b].invariant == inv && causes[b] == c;
        let cause = match causes[a] {
            // Refused with another class: the fault missed (the case's other fault was
            // caught), or else the class raised where nothing is wrong.
            Cause::WrongClass { fault, raised } => only(a, &|b| same(b, Cause::Missed(fault)))
                .or_else(|| only(a, &|b| same(b, Cause::Spurious(raised)))),
            // A call of a faulty turn dispatched: the fault missed, or else calls dispatched
            // before the turn's end says whether they stand.
            Cause::FaultyTurnDispatched => {
                only(a, &|b| findings[b].invariant == inv && matches!(causes[b], Cause::Missed(_)))
                    .or_else(|| only(a, &|b| causes[b] == Cause::DispatchedBeforeTheEnd))
            }
            _ => None,
        };
        let cause = cause.or_else(|| only(a, &|b| families[b] == families[a]));
        if let Some(r) = cause {
            let ra = root(&mut parent, a);
            let rb = root(&mut parent, r);
            parent[ra] = rb;
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..n {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    let mut bugs: Vec<Bug> = groups
        .into_values()
        .map(|mut members| {
            // The root symptom: must before should (a must failure shows on a complete
            // stream, which no caller policy changes, so the root and the id stay the same
            // under both), then the most cases, then the invariant that says most about the cause.
            members.sort_by(|&x, &y| {
                let (fx, fy) = (&findings[x], &findings[y]);
                (fx.grade, std::cmp::Reverse(fx.cases), specificity(fx.invariant), &fx.id).cmp(&(
                    fy.grade,
                    std::cmp::Reverse(fy.cases),
                    specificity(fy.invariant),
                    &fy.id,
                ))
            });
            let head = &findings[members[0]];
            let trigger = shape(head).unwrap_or_else(|| "no reproducer kept".into());
            let mut settings: Vec<String> =
                members.iter().flat_map(|&m| findings[m].settings.iter().cloned()).collect();
            settings.sort();
            settings.dedup();
            Bug {
                id: bug_id(head.invariant, &head.kind, &trigger),
                title: head.title.clone(),
                grade: members.iter().map(|&m| findings[m].grade).min().unwrap_or(head.grade),
                invariant: head.invariant,
                cases: head.cases,
                trigger,
                symptoms: members.iter().map(|&m| findings[m].id.clone()).collect(),
                settings,
                replay: head.replay.clone(),
            }
        })
        .collect();
    bugs.sort_by(|a, b| {
        (a.grade, std::cmp::Reverse(a.cases), &a.id).cmp(&(b.grade, std::cmp::Reverse(b.cases), &b.id))
    });
    bugs
}

/// A finding's kind without the words that name what the case happened to be rather than
/// what went wrong: the outcome an unannounced call got, the way a cut turn ended, and which
/// kind of foreign bytes reached the text.
fn family(kind: &str) -> String {
    if let Some((_, rest)) = kind.split_once("an outcome (") {
        if let Some((_, tail)) = rest.split_once(") for a call the stream never announced") {
            return format!("an outcome for a call the stream never announced{tail}");
        }
    }
    if kind.ends_with(" bytes in the text") {
        return "bytes not of the text in the text".into();
    }
    for cut in ["must fail as truncated", "must fail as abandoned"] {
        if kind.contains(cut) {
            return kind.replace(cut, "must fail as cut");
        }
    }
    for ending in ["complete", "truncated", "abandoned", "errored"] {
        let words = format!("a well-formed {ending} turn failed with ");
        if let Some(raised) = kind.strip_prefix(&words) {
            return format!("a well-formed turn failed with {raised}");
        }
    }
    kind.to_owned()
}

/// What a finding's kind (the oracle's words, docs/SPEC.md §3) says about its cause, where
/// one finding is the consequence of another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cause<'k> {
    /// `a faulty stream (F) accepted without an error`: fault `F` is not detected.
    Missed(&'k str),
    /// `a faulty stream (F) refused with the class E`.
    WrongClass {
        fault: &'k str,
        raised: &'k str,
    },
    /// `a well-formed … turn failed with E`: the client raises `E` where nothing is wrong.
    Spurious(&'k str),
    /// `a call of a faulty turn dispatched`.
    FaultyTurnDispatched,
    /// `a call that must fail as truncated was dispatchable`.
    DispatchedBeforeTheEnd,
    Other,
}

impl<'k> Cause<'k> {
    fn of(kind: &'k str) -> Cause<'k> {
        if let Some(rest) = kind.strip_prefix("a faulty stream (") {
            let Some((fault, tail)) = rest.split_once(") ") else { return Cause::Other };
            if tail == "accepted without an error" {
                return Cause::Missed(fault);
            }
            if let Some(raised) = tail.strip_prefix("refused with the class ") {
                return Cause::WrongClass { fault, raised };
            }
            return Cause::Other;
        }
        if let Some(rest) = kind.strip_prefix("a well-formed ") {
            if let Some((_, raised)) = rest.split_once(" turn failed with ") {
                return Cause::Spurious(raised);
            }
        }
        match kind {
            "a call of a faulty turn dispatched" => Cause::FaultyTurnDispatched,
            "a call that must fail as truncated was dispatchable" => Cause::DispatchedBeforeTheEnd,
            _ => Cause::Other,
        }
    }
}

/// Lower says more about a cause: a merged or changed call names what went wrong, "a call
/// with no outcome" (ACC-ACCOUNT) only that something did.
fn specificity(inv: Invariant) -> usize {
    use Invariant::*;
    match inv {
        AccIdentity => 0,
        AccFidelity => 1,
        AccStrict => 2,
        AccProtocol => 3,
        AccTruncation | AccAbandon => 4,
        SubjectCrash => 9,
        AccAccount => 8,
        _ => 5,
    }
}

/// The version of the rules that group findings into bugs, written in a JSONL footer: a
/// report whose bugs were grouped by other rules has them grouped again from its records when
/// read. 2: a lone symptom joins the one bug its words or its cause point at.
pub const BUG_RULES: u32 = 2;

/// `BUG-` and FNV-1a (32 bits) of the root's invariant, what went wrong and the trigger's
/// shape: the same on every machine.
pub fn bug_id(invariant: Invariant, kind: &str, trigger: &str) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in invariant.id().bytes().chain([0]).chain(kind.bytes()).chain([0]).chain(trigger.bytes()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("BUG-{h:08x}")
}
