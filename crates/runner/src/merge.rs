//! Merging reports: the shards of one run back into the report of the whole run, or several
//! runs of one implementation (other seeds) into one.
//!
//! Reports with per-case records (a run, or JSONL) merge exactly: records are put in run
//! order (named cases, then generated ones by seed and position), a case present twice is
//! counted once, and the limit of failures kept in full is applied again per seed, as one
//! run would have applied it. Merging the N shards of a run therefore gives the unsharded
//! run's report. JSON summaries have no records: they merge by adding their counts, which is
//! exact only for disjoint runs.
//!
//! Shards that do not make the whole run (two of three) merge all the same, but the merged
//! report says which are missing ([`missing_shards`]): in its shard label (`1+2/3`) and its
//! verdict line, and `toolcert merge` exits non-zero for it unless told to accept it.

use std::collections::{BTreeMap, BTreeSet};

use toolcert_oracle::Invariant;

use crate::findings::Signature;
use crate::report::{status_row, Report};

/// The setting a report was run in: reports merge only when theirs agree.
pub fn setting_key(r: &Report) -> String {
    format!(
        "{} | {} | grade {} | schema {} | suite {} {}",
        r.subject,
        r.setting_label(),
        r.grade.as_str(),
        if r.schema { "on" } else { "off" },
        r.suite.version,
        r.suite.digest
    )
}

/// Merges reports of one implementation in one setting.
pub fn merge(reports: Vec<Report>) -> Result<Report, String> {
    let mut reports = reports.into_iter();
    let mut first = reports.next().ok_or("no reports to merge")?;
    let rest: Vec<Report> = reports.collect();
    if rest.is_empty() {
        return Ok(first);
    }
    for r in &rest {
        let (a, b) = (setting_key(&first), setting_key(r));
        if a != b {
            return Err(format!(
                "cannot merge reports of different settings (subject, level, dialect, grade, schema profile \
                 and suite must agree):\n  {a}\n  {b}"
            ));
        }
    }
    let all = std::iter::once(&first).chain(&rest);
    let mut seeds: BTreeSet<u64> =
        all.clone().flat_map(|r| std::iter::once(r.seed).chain(r.seeds.clone())).collect();
    let shard = merged_shard(all.clone().map(|r| r.shard.as_deref()));
    let coverage = merge_coverage(all.clone().map(|r| r.coverage.as_ref()));
    let exact = all.clone().all(Report::has_records);
    if exact {
        let mut records: Vec<_> = all.flat_map(|r| r.records.iter().cloned()).collect();
        records.sort_by_key(|r| r.order());
        let mut seen = BTreeSet::new();
        records.retain(|r| seen.insert(r.case.clone()));
        // Keep generated failures in full as one run keeps them: only those that show a
        // signature no earlier kept failure shows (each shard shrank its own first ones).
        let mut shown: BTreeSet<Signature> = records
            .iter()
            .filter(|r| r.seed.is_none())
            .filter_map(|r| r.failure.as_ref())
            .flat_map(|f| Signature::all(&f.violations))
            .collect();
        for r in records.iter_mut().filter(|r| r.seed.is_some()) {
            if let Some(f) = &r.failure {
                let sigs = Signature::all(&f.violations);
                if sigs.iter().all(|s| shown.contains(s)) {
                    r.failure = None;
                } else {
                    shown.extend(sigs);
                }
            }
        }
        first.records = records;
        first.finish();
    } else {
        add_summaries(&mut first, &rest);
    }
    first.seed = seeds.first().copied().unwrap_or(first.seed);
    first.seeds = if seeds.len() > 1 { std::mem::take(&mut seeds).into_iter().collect() } else { Vec::new() };
    first.shard = shard;
    first.coverage_text = coverage.as_ref().and_then(coverage_text);
    first.coverage = coverage;
    first.baseline = None;
    // A price is of the subject, not of its cases: shards priced once carry it once.
    if first.cost.is_none() {
        first.cost = rest.iter().find_map(|r| r.cost.clone());
    }
    if first.bounded.is_none() {
        first.bounded = rest.iter().find_map(|r| r.bounded.clone());
    }
    Ok(first)
}

/// Adds JSON summaries' counts to `into` (no records: runs are taken as disjoint).
fn add_summaries(into: &mut Report, rest: &[Report]) {
    let mut must: BTreeMap<Invariant, usize> = BTreeMap::new();
    let mut should: BTreeMap<Invariant, usize> = BTreeMap::new();
    let mut exercised: BTreeMap<Invariant, usize> = BTreeMap::new();
    let mut findings: BTreeMap<String, crate::Finding> = BTreeMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    for r in std::iter::once(&*into).chain(rest) {
        for i in &r.invariants {
            // Older summaries count `failures` without splitting it by grade.
            let (m, s) = if i.must_failures + i.should_failures == i.failures {
                (i.must_failures, i.should_failures)
            } else if i.must == crate::Status::Fail {
                (i.failures, 0)
            } else {
                (0, i.failures)
            };
            *must.entry(i.id).or_default() += m;
            *should.entry(i.id).or_default() += s;
            *exercised.entry(i.id).or_default() += i.exercised;
        }
        for f in &r.findings {
            merge_finding(&mut findings, f);
        }
        failures.extend(r.failures.iter().filter(|f| seen.insert(f.case.clone())).cloned());
        skipped.extend(r.skipped.iter().filter(|s| !skipped.contains(*s)).cloned().collect::<Vec<_>>());
    }
    into.cases += rest.iter().map(|r| r.cases).sum::<usize>();
    into.named_cases += rest.iter().map(|r| r.named_cases).sum::<usize>();
    into.generated_cases += rest.iter().map(|r| r.generated_cases).sum::<usize>();
    into.more_failures += rest.iter().map(|r| r.more_failures).sum::<usize>();
    into.unsupported += rest.iter().map(|r| r.unsupported).sum::<usize>();
    into.failures = failures;
    into.skipped = skipped;
    into.named_skipped = into.skipped.len();
    into.findings = findings.into_values().collect();
    into.findings.sort_by(|a, b| {
        (a.grade, std::cmp::Reverse(a.cases), &a.id).cmp(&(b.grade, std::cmp::Reverse(b.cases), &b.id))
    });
    into.invariants = Invariant::ALL
        .iter()
        .map(|&inv| {
            status_row(
                inv,
                into.grade,
                must.get(&inv).copied().unwrap_or(0),
                should.get(&inv).copied().unwrap_or(0),
                exercised.get(&inv).copied().unwrap_or(0),
            )
        })
        .collect();
    into.conclude();
}

/// Adds `f` to `into` by id: counts add up, settings join, the smaller reproducer wins.
pub(crate) fn merge_finding(into: &mut BTreeMap<String, crate::Finding>, f: &crate::Finding) {
    match into.get_mut(&f.id) {
        None => {
            into.insert(f.id.clone(), f.clone());
        }
        Some(have) => {
            have.cases += f.cases;
            for s in &f.settings {
                if !have.settings.contains(s) {
                    have.settings.push(s.clone());
                }
            }
            let smaller = match (have.size, f.size) {
                (None, Some(_)) => true,
                (Some(a), Some(b)) => b < a,
                _ => false,
            };
            if smaller {
                have.size = f.size;
                have.reproducer.clone_from(&f.reproducer);
                have.replay.clone_from(&f.replay);
            }
        }
    }
}

/// The shard label of merged reports: `None` when they cover the whole run.
fn merged_shard<'a>(shards: impl Iterator<Item = Option<&'a str>>) -> Option<String> {
    let mut count = None;
    let mut have = BTreeSet::new();
    for s in shards {
        let shard: crate::Shard = match s {
            None => return None,
            Some(s) => s.parse().ok()?,
        };
        if count.is_some_and(|c| c != shard.count) {
            return None;
        }
        count = Some(shard.count);
        have.insert(shard.index);
    }
    let count = count?;
    if have.len() == count {
        return None;
    }
    let list: Vec<String> = have.iter().map(usize::to_string).collect();
    Some(format!("{}/{count}", list.join("+")))
}

/// The shards a report of a sharded run lacks (`[3]` for `1+2/3`, `[1, 3]` for `2/3`); empty
/// for a report of the whole run.
pub fn missing_shards(r: &Report) -> Vec<usize> {
    let Some((have, count)) = r.shard.as_deref().and_then(|s| s.split_once('/')) else { return Vec::new() };
    let Ok(count) = count.parse::<usize>() else { return Vec::new() };
    let have: BTreeSet<usize> = have.split('+').filter_map(|k| k.parse().ok()).collect();
    (1..=count).filter(|k| !have.contains(k)).collect()
}

/// The text form of a coverage table (as a run prints it), so that a merged report's footer is
/// the unsharded run's. The cases counted are those of the ending labels, which apply to
/// every case.
fn coverage_text(table: &serde_json::Value) -> Option<String> {
    use toolcert_gen::coverage::{CoverageStats, Label, LabelCount, LabelGroup, PROFILE_KEY};
    let mut counts = Vec::new();
    let mut profile = Vec::new();
    let mut cases = 0;
    for (name, c) in table.as_object()? {
        let count =
            LabelCount { count: c.get("count")?.as_u64()?, applicable: c.get("applicable")?.as_u64()? };
        if let Some(flag) = name.strip_prefix(PROFILE_KEY) {
            profile.push((flag, count));
            continue;
        }
        let label = Label::ALL.into_iter().find(|l| l.name() == name)?;
        if label.group() == LabelGroup::Ending {
            cases = cases.max(count.applicable);
        }
        counts.push((label, count));
    }
    Some(CoverageStats::from_counts(cases, counts).with_profile_counts(profile).ok()?.to_string())
}

/// Adds coverage tables label by label (`{label: {count, applicable, percent}}`).
fn merge_coverage<'a>(
    tables: impl Iterator<Item = Option<&'a serde_json::Value>>,
) -> Option<serde_json::Value> {
    let mut sum: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut any = false;
    for table in tables.flatten() {
        any = true;
        for (label, c) in table.as_object()? {
            let e = sum.entry(label.clone()).or_default();
            e.0 += c.get("count")?.as_u64()?;
            e.1 += c.get("applicable")?.as_u64()?;
        }
    }
    if !any {
        return None;
    }
    let map: serde_json::Map<String, serde_json::Value> = sum
        .into_iter()
        .map(|(label, (count, applicable))| {
            // As toolcert_gen's CoverageStats serialises: a percentage to two decimals.
            let percent = (applicable > 0)
                .then(|| 100.0 * count as f64 / applicable as f64)
                .map(|p| (p * 100.0).round() / 100.0);
            (label, serde_json::json!({"count": count, "applicable": applicable, "percent": percent}))
        })
        .collect();
    Some(serde_json::Value::Object(map))
}
