//! Checking generated cases on several threads (`--jobs N`).
//!
//! A subject is not shared between threads: each job makes its own (a subprocess subject
//! starts its own process) with [`MoreSubjects::make`]. Case `k` depends on the seed and `k`
//! alone, so a job generates its cases itself; what a case gave comes back to the caller's
//! thread, which records (and, for a new finding, shrinks) the cases in the order of `k`. The
//! report is therefore byte-identical for every job count. Cases are handed out two windows ahead of
//! the recording, so that at most a few hundred checked cases wait to be recorded (bounded
//! memory) and the jobs never wait for the recording.

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
    let window = 64 * jobs;
    let (work_tx, work_rx) = mpsc::channel::<usize>();
    let work_rx = Mutex::new(work_rx);
    type Done = (Case, Option<Coverage>, Checked);
    let (done_tx, done_rx) = mpsc::channel::<(usize, Option<Done>)>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let done_tx = done_tx.clone();
            let work_rx = &work_rx;
            scope.spawn(move || {
                let subject = (more.make)().ok();
                loop {
                    let next = work_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok(k) = next else { break };
                    // Without a subject of its own the job hands the case back unchecked.
                    let result = subject.as_ref().map(|s| {
                        let case = run.generated_case(strategy, k);
                        let (mut checked, coverage) = check_classified(&**s, &case, run.sampled(k));
                        checked.parsed = Default::default();
                        // What the recording thread does not read is freed here, on the thread
                        // that allocated it (a free from another thread costs the allocator
                        // far more): the observations always, and a passing case but its name.
                        checked.observations = Vec::new();
                        let case = if checked.violations.is_empty() && checked.unsupported.is_none() {
                            Case { name: case.name, streams: Vec::new(), schedule: Default::default() }
                        } else {
                            case
                        };
                        (case, Some(coverage), checked)
                    });
                    if done_tx.send((k, result)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        // Two windows in flight: the jobs check the next cases while this thread records
        // (and shrinks) the earlier ones, so neither waits for the other at a window's end.
        let mut pending: VecDeque<usize> = VecDeque::with_capacity(2 * window);
        let mut back: BTreeMap<usize, Option<Done>> = BTreeMap::new();
        let send = |pending: &mut VecDeque<usize>, ks: &mut dyn Iterator<Item = usize>| {
            while pending.len() < 2 * window {
                let Some(k) = ks.next() else { break };
                // The receivers live until the scope ends.
                let _ = work_tx.send(k);
                pending.push_back(k);
            }
        };
        send(&mut pending, ks);
        while let Some(k) = pending.pop_front() {
            while !back.contains_key(&k) {
                match done_rx.recv() {
                    Ok((done, result)) => {
                        back.insert(done, result);
                    }
                    // Every job is gone (each panicked): check the rest here.
                    Err(_) => break,
                }
            }
            let (case, coverage, checked) = match back.remove(&k).flatten() {
                Some(done) => done,
                None => {
                    let case = run.generated_case(strategy, k);
                    let checked = check(own, &case, run.sampled(k));
                    (case, None, checked)
                }
            };
            record(k, case, coverage, checked);
            send(&mut pending, ks);
        }
        drop(work_tx);
    });
}
