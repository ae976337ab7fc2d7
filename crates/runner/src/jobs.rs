//! Checking generated cases on several threads (`--jobs N`).
//!
//! A subject is not shared between threads: each job makes its own (a subprocess subject
//! starts its own process) with [`MoreSubjects::make`]. Case `k` depends on the seed and `k`
//! alone, so a job generates its cases itself; what a case gave comes back to the caller's
//! thread, which records (and, for a new finding, shrinks) the cases in the order of `k`. The
//! report is therefore byte-identical for every job count. Cases are handed out two windows ahead of
//! the recording, in batches of consecutive cases, so that at most a few hundred checked cases
//! wait to be recorded (bounded memory), the jobs never wait for the recording, and the
//! recording thread wakes once per batch rather than once per case.

use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc;
use std::sync::Mutex;

use toolcert_gen::coverage::Coverage;
use toolcert_gen::strategy::CaseStrategy;
use toolcert_scenario::Case;
use toolcert_subject::Subject;

use crate::{check, check_classified, Certification, Checked};

/// How to run on several threads: the number of jobs, and how a job makes its subject.
pub struct MoreSubjects<'a> {
    pub jobs: usize,
    /// Makes one more subject like the run's own; an error leaves that job out (the others,
    /// and the caller's thread, check its cases).
    pub make: &'a (dyn Fn() -> Result<Box<dyn Subject>, String> + Sync),
}

/// Cases per batch: a job takes a batch of consecutive cases and hands back what they gave
/// in one message. Handing back one case at a time woke the recording thread for every case:
/// at 200,000 events-level cases `--jobs 2` made 171,000 voluntary and 164,000 involuntary
/// context switches (against 1,800 at one job) and 0.8 s of system time.
const BATCH: usize = 64;

/// Batches in flight per job: one being checked, one queued, so a job that finishes a batch
/// has the next at hand while the recording thread records (and shrinks) earlier ones.
const IN_FLIGHT: usize = 2;

type Done = (Case, Option<Coverage>, Checked);

/// Checks cases `ks` of `run` on `jobs` threads and calls `record(k, case, coverage, checked)`
/// for each, in the order of `ks` (a job classifies its cases for the coverage report too: it
/// costs about as much as checking them).
pub(crate) fn check_in_parallel(
    run: &Certification,
    strategy: &CaseStrategy,
    ks: &mut dyn Iterator<Item = usize>,
    jobs: usize,
    more: &MoreSubjects<'_>,
    own: &dyn Subject,
    record: &mut dyn FnMut(usize, Case, Option<Coverage>, Checked),
) {
    // A batch is numbered in the order its cases come from `ks`.
    let (work_tx, work_rx) = mpsc::channel::<(usize, Vec<usize>)>();
    let work_rx = Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Vec<(usize, Option<Done>)>)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let done_tx = done_tx.clone();
            let work_rx = &work_rx;
            scope.spawn(move || {
                let subject = (more.make)().ok();
                loop {
                    let next = work_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok((batch, cases)) = next else { break };
                    // Without a subject of its own the job hands the cases back unchecked.
                    let results = cases
                        .into_iter()
                        .map(|k| (k, subject.as_ref().map(|s| check_one(run, strategy, &**s, k))));
                    if done_tx.send((batch, results.collect())).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        let mut pending: VecDeque<(usize, Vec<usize>)> = VecDeque::with_capacity(IN_FLIGHT * jobs);
        let mut back: BTreeMap<usize, Vec<(usize, Option<Done>)>> = BTreeMap::new();
        let mut numbered = 0;
        let mut send = |pending: &mut VecDeque<(usize, Vec<usize>)>, ks: &mut dyn Iterator<Item = usize>| {
            while pending.len() < IN_FLIGHT * jobs {
                let cases: Vec<usize> = (&mut *ks).take(BATCH).collect();
                if cases.is_empty() {
                    break;
                }
                // The receivers live until the scope ends.
                let _ = work_tx.send((numbered, cases.clone()));
                pending.push_back((numbered, cases));
                numbered += 1;
            }
        };
        send(&mut pending, ks);
        while let Some((batch, cases)) = pending.pop_front() {
            while !back.contains_key(&batch) {
                match done_rx.recv() {
                    Ok((done, results)) => {
                        back.insert(done, results);
                    }
                    // Every job is gone (each panicked): check the rest here.
                    Err(_) => break,
                }
            }
            let results =
                back.remove(&batch).unwrap_or_else(|| cases.into_iter().map(|k| (k, None)).collect());
            for (k, done) in results {
                let (case, coverage, checked) = match done {
                    Some(done) => done,
                    None => {
                        let case = run.generated_case(strategy, k);
                        let checked = check(own, &case, run.sampled(k));
                        (case, None, checked)
                    }
                };
                record(k, case, coverage, checked);
            }
            send(&mut pending, ks);
        }
        drop(work_tx);
    });
}

/// Generates, classifies and checks case `k` on a job's thread.
fn check_one(run: &Certification, strategy: &CaseStrategy, subject: &dyn Subject, k: usize) -> Done {
    let case = run.generated_case(strategy, k);
    let (mut checked, coverage) = check_classified(subject, &case, run.sampled(k));
    checked.parsed = Default::default();
    // What the recording thread does not read is freed here, on the thread that allocated it
    // (a free from another thread costs the allocator far more): the observations always,
    // and a passing case but its name.
    checked.observations = Vec::new();
    let case = if checked.violations.is_empty() && checked.unsupported.is_none() {
        Case { name: case.name, streams: Vec::new(), schedule: Default::default() }
    } else {
        case
    };
    (case, Some(coverage), checked)
}
