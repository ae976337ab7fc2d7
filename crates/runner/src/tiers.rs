//! Tiers: the verdict a maintainer reads first, one per class of cases (docs/SPEC.md,
//! "Tiers").
//!
//! Where it sits: each case run is classed here as it is recorded ([`CaseClass::of`], from
//! the scenario alone), each violation is attributed to one tier ([`tier_of`]) from its
//! invariant, its kind and the case's class, and [`crate::Report::finish`] turns the tally
//! of both into one [`TierStatus`] per tier, pass, fail or n/a with its exercised count,
//! exactly as an invariant's row is made. The per-invariant table stays beside it
//! (`--grade`, the classic view).

use serde::{Deserialize, Serialize};
use toolcert_oracle::{Grade, Invariant};
use toolcert_scenario::{Block, Case};

use crate::findings::Signature;

/// The tiers, in the order every view shows them: six, the fifth in two parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// The provider's own streams: nothing lost, merged, changed or duplicated.
    Standard,
    /// Every other server profile of the dialect.
    Compatible,
    /// Truncated, abandoned and errored turns are never offered as runnable.
    Endings,
    /// An invalid document is never dispatched as something else.
    Strict,
    /// Faulty streams (a slip of the server) fail the turn, and dispatch nothing they may not.
    Faulty,
    /// A hostile upstream (the hostile server profiles) neither pollutes the client's runtime
    /// nor forges a call: tier 5's second part, reported apart.
    Hostile,
    /// Numbers past a double's range or precision keep their exact value. Implementation-
    /// defined under RFC 8259 §6: a difference is reported, never a must failure.
    Numbers,
}

impl Tier {
    pub const ALL: [Tier; 7] = [
        Tier::Standard,
        Tier::Compatible,
        Tier::Endings,
        Tier::Strict,
        Tier::Faulty,
        Tier::Hostile,
        Tier::Numbers,
    ];

    /// Its number as docs/SPEC.md lists them: 1 to 6, tier 5 in two parts (`5a`, `5b`).
    pub fn number(self) -> &'static str {
        match self {
            Tier::Standard => "1",
            Tier::Compatible => "2",
            Tier::Endings => "3",
            Tier::Strict => "4",
            Tier::Faulty => "5a",
            Tier::Hostile => "5b",
            Tier::Numbers => "6",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tier::Standard => "standard streams",
            Tier::Compatible => "compatible servers",
            Tier::Endings => "endings",
            Tier::Strict => "strict arguments",
            Tier::Faulty => "faulty streams",
            Tier::Hostile => "hostile upstream",
            Tier::Numbers => "exact numbers",
        }
    }

    /// The tier's key in JSON and on the command line.
    pub fn key(self) -> &'static str {
        match self {
            Tier::Standard => "standard",
            Tier::Compatible => "compatible",
            Tier::Endings => "endings",
            Tier::Strict => "strict",
            Tier::Faulty => "faulty",
            Tier::Hostile => "hostile",
            Tier::Numbers => "numbers",
        }
    }
}

/// How many tiers (and parts) there are.
const TIERS: usize = Tier::ALL.len();

/// What a case holds that puts it in a tier besides the standard or compatible one: read from
/// the scenario alone, so a record says it without its scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaseClass(u8);

const FAULTY: u8 = 1;
const NUMBERS: u8 = 2;

impl CaseClass {
    /// A fault of the stream (§3) or a damaged binary message.
    pub fn faulty(self) -> bool {
        self.0 & FAULTY != 0
    }

    /// A call's document holds a number a double cannot hold exactly.
    pub fn numbers(self) -> bool {
        self.0 & NUMBERS != 0
    }

    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    pub fn of(case: &Case) -> CaseClass {
        let mut c = 0;
        for s in &case.streams {
            // A spliced generation and a hostile index are faults the wire carries beside
            // the case's own (docs/SPEC.md §3, `malformed`).
            if !s.faults.is_empty()
                || s.transport.corrupt.is_some()
                || s.wire.spliced.is_some()
                || s.wire.hostile_index.is_some()
            {
                c |= FAULTY;
            }
            if c & NUMBERS == 0
                && s.blocks
                    .iter()
                    .any(|b| matches!(b, Block::Call(call) if has_inexact_number(&call.arguments)))
            {
                c |= NUMBERS;
            }
        }
        CaseClass(c)
    }

    /// Both classes at once.
    pub fn union(self, other: CaseClass) -> CaseClass {
        CaseClass(self.0 | other.0)
    }

    /// The class's words, as a record carries them.
    pub fn words(self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.faulty() {
            out.push("faulty");
        }
        if self.numbers() {
            out.push("numbers");
        }
        out
    }

    pub fn from_words<'a>(words: impl IntoIterator<Item = &'a str>) -> CaseClass {
        let mut c = 0;
        for w in words {
            match w {
                "faulty" => c |= FAULTY,
                "numbers" => c |= NUMBERS,
                _ => {}
            }
        }
        CaseClass(c)
    }
}

impl Serialize for CaseClass {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.words().serialize(s)
    }
}

impl<'de> Deserialize<'de> for CaseClass {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let words: Vec<String> = Vec::deserialize(d)?;
        Ok(CaseClass::from_words(words.iter().map(String::as_str)))
    }
}

/// Whether a document's text holds a number literal that a double does not hold exactly: an
/// integer past ±(2^53−1), or a decimal whose nearest double has another decimal value. Read
/// from the text (the document may be invalid JSON on purpose): a literal is a run of
/// `-+.0-9eE` outside strings that starts with a digit or a minus sign.
pub fn has_inexact_number(doc: &str) -> bool {
    let b = doc.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                if inexact(&doc[start..i]) {
                    return true;
                }
            }
            _ => i += 1,
        }
    }
    false
}

/// Whether the literal `s` names a value no double holds exactly (a literal that is no
/// number at all is not counted: the strict tier judges it).
fn inexact(s: &str) -> bool {
    let Some(exact) = Decimal::parse(s) else { return false };
    if !s.contains(['.', 'e', 'E']) {
        // An integer: exact in a double when within ±(2^53−1).
        let digits = s.trim_start_matches('-').trim_start_matches('0');
        return digits.len() > 16 || digits.parse::<u64>().is_ok_and(|n| n > (1 << 53) - 1);
    }
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() => Decimal::parse(&format!("{f:e}")).is_some_and(|d| d != exact),
        _ => true,
    }
}

/// A decimal value as its significant digits and the exponent of the last one (sign kept;
/// zero is one value whatever its sign).
#[derive(PartialEq, Eq, Debug)]
struct Decimal {
    negative: bool,
    digits: String,
    exponent: i64,
}

impl Decimal {
    fn parse(s: &str) -> Option<Decimal> {
        let (negative, rest) = match s.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, s),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], rest[at + 1..].trim_start_matches('+').parse::<i64>().ok()?),
            None => (rest, 0),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit()) {
            return None;
        }
        let all = format!("{int}{frac}");
        let lead = all.trim_start_matches('0');
        let digits = lead.trim_end_matches('0');
        if digits.is_empty() {
            return Some(Decimal { negative: false, digits: String::new(), exponent: 0 });
        }
        let trailing = (lead.len() - digits.len()) as i64;
        Some(Decimal { negative, digits: digits.to_string(), exponent: exp - frac.len() as i64 + trailing })
    }
}

/// The tier a violation counts against, from its invariant, its kind and the class of the case
/// that showed it; `compatible` when the setting is a server profile other than the
/// provider's own.
pub fn tier_of(sig: &Signature, class: CaseClass, compatible: bool) -> Tier {
    use Invariant::*;
    match sig.invariant {
        AccTruncation | AccAbandon | AccEnding => Tier::Endings,
        AccStrict => Tier::Strict,
        _ if class.faulty() => Tier::Faulty,
        BytesChecksum => Tier::Faulty,
        AccFidelity if class.numbers() && sig.kind.ends_with(NUMBER_CHANGED) => Tier::Numbers,
        _ if compatible => Tier::Compatible,
        _ => Tier::Standard,
    }
}

/// The version of the rules that count violations against tiers, written in a JSONL footer:
/// a report whose tiers were counted by other rules has them counted again from its records
/// when read. 2: a changed number counts in tier 6 whatever its kind's prefix. 3: tier 5 in
/// two parts, the hostile upstream's (5b) apart. 4: a spliced generation and a hostile index
/// are faults (tier 5) like the case's own.
pub const TIER_RULES: u32 = 4;

/// How the oracle's kind for a number whose value changed ends (`dispatched arguments: a
/// number changed`; crates/oracle: the arguments' diff).
const NUMBER_CHANGED: &str = "a number changed";

/// Whether a case exercises `tier`: it could break one of the tier's rules.
pub fn exercises(
    tier: Tier,
    class: CaseClass,
    exercised: toolcert_oracle::Exercised,
    compatible: bool,
) -> bool {
    use Invariant::*;
    match tier {
        Tier::Standard => !compatible && !class.faulty(),
        Tier::Compatible => compatible && !class.faulty(),
        Tier::Endings => [AccTruncation, AccAbandon, AccEnding].iter().any(|&i| exercised.contains(i)),
        Tier::Strict => exercised.contains(AccStrict),
        Tier::Faulty => class.faulty(),
        // Moved here from tiers 1 and 5a when the report is a hostile profile's.
        Tier::Hostile => false,
        Tier::Numbers => class.numbers(),
    }
}

/// One tier's verdict, as a report shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TierStatus {
    pub tier: Tier,
    pub name: String,
    /// `pass`, `fail`, `n/a`; for exact numbers `differs` in place of `fail` (never a must
    /// failure: RFC 8259 §6 leaves it to the implementation).
    pub verdict: String,
    /// Cases run that could break one of its rules.
    pub exercised: usize,
    /// Cases that broke one of its rules at the grade the report requires.
    pub failing: usize,
    /// Of them, cases that broke a must part (the rest broke should parts only).
    #[serde(default)]
    pub must_failing: usize,
    /// The findings counted against it (their ids), must before should.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<String>,
    /// The bugs those findings are symptoms of (their ids): what a tier's cell counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bugs: Vec<String>,
}

impl TierStatus {
    /// One line: `1 standard streams   pass   1200 cases exercised`.
    pub fn line(&self) -> String {
        let bugs = match (self.bugs.len(), self.findings.len()) {
            (0, 0) => String::new(),
            (0, 1) => ", 1 finding".into(),
            (0, n) => format!(", {n} findings"),
            (1, _) => ", 1 bug".into(),
            (n, _) => format!(", {n} bugs"),
        };
        let grade = match (self.failing, self.must_failing) {
            (0, _) => "",
            (_, 0) => " (should only)",
            _ => " (must)",
        };
        format!(
            "{:<2} {:<19} {:<20} {} case{} exercised{bugs}",
            self.tier.number(),
            self.name,
            format!("{}{grade}", self.verdict),
            self.exercised,
            if self.exercised == 1 { "" } else { "s" }
        )
    }
}

fn verdict(tier: Tier, exercised: usize, failing: usize) -> &'static str {
    if exercised == 0 && failing == 0 {
        "n/a"
    } else if failing == 0 {
        "pass"
    } else if tier == Tier::Numbers {
        "differs"
    } else {
        "fail"
    }
}

/// The tiers of several reports (settings) as one: counts added, findings joined.
pub fn merge<'a>(reports: impl IntoIterator<Item = &'a [TierStatus]>) -> Vec<TierStatus> {
    let mut out: Vec<TierStatus> = Vec::new();
    for statuses in reports {
        for s in statuses {
            match out.iter_mut().find(|o| o.tier == s.tier) {
                Some(o) => {
                    o.exercised += s.exercised;
                    o.failing += s.failing;
                    o.must_failing += s.must_failing;
                    for f in &s.findings {
                        if !o.findings.contains(f) {
                            o.findings.push(f.clone());
                        }
                    }
                    for b in &s.bugs {
                        if !o.bugs.contains(b) {
                            o.bugs.push(b.clone());
                        }
                    }
                }
                None => out.push(s.clone()),
            }
        }
    }
    for o in &mut out {
        o.verdict = verdict(o.tier, o.exercised, o.failing).into();
    }
    out.sort_by_key(|o| o.tier);
    out
}

/// Per tier: cases that exercised it, cases that broke it at each grade, and the signatures
/// counted against it. Added up record by record, like the rest of the tally.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TierTally {
    pub exercised: [usize; TIERS],
    /// Cases with a violation counted against the tier at must grade, and at should only.
    pub must: [usize; TIERS],
    pub should: [usize; TIERS],
    pub signatures: [std::collections::BTreeSet<Signature>; TIERS],
}

impl TierTally {
    pub fn add(&mut self, class: CaseClass, exercised: toolcert_oracle::Exercised, sigs: &[Signature]) {
        let compatible = false;
        for t in Tier::ALL {
            if exercises(t, class, exercised, compatible) {
                self.exercised[t as usize] += 1;
            }
        }
        let mut must = [false; TIERS];
        let mut should = [false; TIERS];
        for sig in sigs {
            let t = tier_of(sig, class, compatible) as usize;
            match sig.grade {
                Grade::Must => must[t] = true,
                Grade::Should => should[t] = true,
            }
            self.signatures[t].insert(sig.clone());
        }
        for t in 0..TIERS {
            // A case that broke a tier's rule exercised it, whatever its class said.
            if (must[t] || should[t]) && !exercises(Tier::ALL[t], class, exercised, compatible) {
                self.exercised[t] += 1;
            }
            if must[t] {
                self.must[t] += 1;
            } else if should[t] {
                self.should[t] += 1;
            }
        }
    }

    /// The verdicts, at the grade the report requires. Records are tallied as of the
    /// provider's own profile; `compatible` (a report of another server profile) moves what
    /// they counted as standard to the compatible tier, and `hostile` (a hostile profile's)
    /// moves what they counted as standard or faulty to the hostile upstream's tier.
    pub fn statuses(&self, required: Grade, compatible: bool, hostile: bool) -> Vec<TierStatus> {
        let mut t = self.clone();
        if hostile {
            let h = Tier::Hostile as usize;
            // Standard and faulty cases are apart (a case is faulty or not): the counts add.
            for from in [Tier::Standard as usize, Tier::Faulty as usize] {
                t.exercised[h] += std::mem::take(&mut t.exercised[from]);
                t.must[h] += std::mem::take(&mut t.must[from]);
                t.should[h] += std::mem::take(&mut t.should[from]);
                let moved = std::mem::take(&mut t.signatures[from]);
                t.signatures[h].extend(moved);
            }
        } else if compatible {
            let (s, c) = (Tier::Standard as usize, Tier::Compatible as usize);
            t.exercised[c] = std::mem::take(&mut t.exercised[s]);
            t.must[c] = std::mem::take(&mut t.must[s]);
            t.should[c] = std::mem::take(&mut t.should[s]);
            t.signatures[c] = std::mem::take(&mut t.signatures[s]);
        }
        t.verdicts(required)
    }

    fn verdicts(&self, required: Grade) -> Vec<TierStatus> {
        Tier::ALL
            .iter()
            .map(|&t| {
                let i = t as usize;
                let failing = self.must[i] + if required == Grade::Should { self.should[i] } else { 0 };
                let verdict = verdict(t, self.exercised[i], failing);
                let mut sigs: Vec<&Signature> = self.signatures[i].iter().collect();
                sigs.sort_by_key(|s| (s.grade != Grade::Must, s.invariant, s.kind.clone()));
                TierStatus {
                    tier: t,
                    name: t.name().into(),
                    verdict: verdict.into(),
                    exercised: self.exercised[i],
                    failing,
                    must_failing: self.must[i],
                    findings: sigs.into_iter().map(Signature::id).collect(),
                    // Filled in once the findings are grouped (`Report::finish`).
                    bugs: Vec::new(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_a_double_holds_are_exact_and_others_are_not() {
        for exact in ["0", "-0", "1.5", "9007199254740991", "-9007199254740991", "0.1", "1e2", "2.50", "1E-3"]
        {
            assert!(!has_inexact_number(&format!("{{\"n\": {exact}}}")), "{exact}");
        }
        for inexact in [
            "9007199254740993",
            "-9007199254740993",
            "12345678901234567890",
            "0.10000000000000000001",
            "1e400",
        ] {
            assert!(has_inexact_number(&format!("{{\"n\": [{inexact}]}}")), "{inexact}");
        }
        // Inside a string a number is text.
        assert!(!has_inexact_number(r#"{"n": "9007199254740993"}"#));
        assert!(!has_inexact_number(r#"{"n\"": "x", "m": 1}"#));
    }

    #[test]
    fn a_violation_counts_against_the_tier_of_its_rule_then_of_its_case() {
        let sig = |invariant, kind: &str| Signature { invariant, grade: Grade::Must, kind: kind.into() };
        let plain = CaseClass::default();
        let faulty = CaseClass::from_words(["faulty"]);
        let numbers = CaseClass::from_words(["numbers"]);
        assert_eq!(tier_of(&sig(Invariant::AccTruncation, "x"), faulty, false), Tier::Endings);
        assert_eq!(tier_of(&sig(Invariant::AccStrict, "x"), plain, true), Tier::Strict);
        assert_eq!(tier_of(&sig(Invariant::AccProtocol, "x"), faulty, false), Tier::Faulty);
        assert_eq!(tier_of(&sig(Invariant::AccProtocol, "x"), plain, false), Tier::Standard);
        assert_eq!(tier_of(&sig(Invariant::AccFidelity, NUMBER_CHANGED), numbers, false), Tier::Numbers);
        assert_eq!(tier_of(&sig(Invariant::AccFidelity, NUMBER_CHANGED), plain, true), Tier::Compatible);
        assert_eq!(tier_of(&sig(Invariant::AccIdentity, "x"), numbers, true), Tier::Compatible);
    }

    #[test]
    fn a_spliced_generation_and_a_hostile_index_make_a_case_faulty() {
        let spliced = toolcert_gen::named::by_id("dialect/spliced-generation").unwrap().case;
        assert!(spliced.streams[0].faults.is_empty() && CaseClass::of(&spliced).faulty());
        let mut plain = spliced.clone();
        plain.streams[0].wire.spliced = None;
        assert!(!CaseClass::of(&plain).faulty());
        plain.streams[0].wire.hostile_index =
            Some(toolcert_scenario::HostileIndex { after: 1, value: "\"__proto__\"".into() });
        assert!(CaseClass::of(&plain).faulty());
        assert_eq!(
            CaseClass::of(&plain).union(CaseClass::from_words(["numbers"])).words(),
            ["faulty", "numbers"]
        );
    }

    #[test]
    fn a_hostile_report_counts_its_standard_and_faulty_cases_in_the_hostile_part() {
        let mut t = TierTally::default();
        let forged =
            Signature { invariant: Invariant::AccAccount, grade: Grade::Must, kind: "forged".into() };
        let cut = Signature { invariant: Invariant::AccTruncation, grade: Grade::Must, kind: "cut".into() };
        t.add(CaseClass::default(), Default::default(), std::slice::from_ref(&forged));
        t.add(CaseClass::from_words(["faulty"]), Default::default(), &[]);
        t.add(CaseClass::default(), Default::default(), std::slice::from_ref(&cut));
        let s = t.statuses(Grade::Must, true, true);
        let h = &s[Tier::Hostile as usize];
        assert_eq!((h.verdict.as_str(), h.exercised, h.failing), ("fail", 3, 1));
        assert_eq!(h.findings, [forged.id()]);
        assert_eq!(s[Tier::Standard as usize].verdict, "n/a");
        assert_eq!(s[Tier::Compatible as usize].verdict, "n/a");
        assert_eq!(s[Tier::Faulty as usize].verdict, "n/a");
        // An ending's rule keeps its own tier.
        assert_eq!(s[Tier::Endings as usize].findings, [cut.id()]);
        // Elsewhere the hostile part is not exercised.
        assert_eq!(t.statuses(Grade::Must, true, false)[Tier::Hostile as usize].verdict, "n/a");
    }

    #[test]
    fn exact_numbers_never_fail_they_differ() {
        let mut t = TierTally::default();
        let sig =
            Signature { invariant: Invariant::AccFidelity, grade: Grade::Must, kind: NUMBER_CHANGED.into() };
        t.add(CaseClass::from_words(["numbers"]), Default::default(), &[sig]);
        let s = t.statuses(Grade::Must, false, false);
        assert_eq!(s[Tier::Numbers as usize].verdict, "differs");
        assert_eq!(s[Tier::Standard as usize].verdict, "pass");
        assert_eq!(s[Tier::Faulty as usize].verdict, "n/a");
        let c = t.statuses(Grade::Must, true, false);
        assert_eq!((c[0].verdict.as_str(), c[1].verdict.as_str()), ("n/a", "pass"));
        let both = merge([s.as_slice(), c.as_slice()]);
        assert_eq!((both[0].exercised, both[1].exercised), (1, 1));
    }
}
