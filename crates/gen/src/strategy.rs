//! proptest strategies for whole cases and single turns.
//!
//! A strategy samples a plan from the runner's RNG and builds the case from it; its value
//! tree shrinks the plan (see the `plan` module), trying one simpler variant at a time and
//! keeping each that still fails, so the counterexample a run reports is a fixpoint: no
//! single stream, block, fault, field, piece or split can be dropped and no choice made
//! simpler without the failure going away.

use std::sync::Arc;

use proptest::prelude::Rng as _;
use proptest::strategy::{NewTree, Strategy, ValueTree};
use proptest::test_runner::{Config, TestRunner};
use toolcert_scenario::{Case, Turn};

use crate::build::{build_case, build_turn};
use crate::plan::{CasePlan, Shrink, TurnPlan};
use crate::source::RngSource;
use crate::GenConfig;

/// Whole cases: one or more streams (turns) and how they are scheduled.
pub fn case_strategy(cfg: &GenConfig) -> CaseStrategy {
    CaseStrategy { cfg: Arc::new(cfg.clone()) }
}

/// Single turns (one stream).
pub fn turn_strategy(cfg: &GenConfig) -> TurnStrategy {
    TurnStrategy { cfg: Arc::new(cfg.clone()) }
}

/// The seeded stream of cases a run with `seed` checks, named `gen/{seed}/{k}`: case `k` is
/// the value [`case_strategy`] gives a [`TestRunner`] built on [`crate::rng_for_case`]`(seed, k)`.
pub fn cases(cfg: &GenConfig, seed: u64) -> impl Iterator<Item = Case> {
    let strategy = case_strategy(cfg);
    (0u64..).map(move |k| generated_case(&strategy, seed, k, format!("gen/{seed}/{k}")))
}

/// Generated case `k` of `seed`, named `name`: the value of [`case_tree`]`(strategy, seed, k)`,
/// sampled without building a proptest runner for it (a run asks for millions of cases and
/// shrinks only a few).
pub fn generated_case(strategy: &CaseStrategy, seed: u64, k: u64, name: String) -> Case {
    let plan = CasePlan::sample(&mut RngSource::new(&mut crate::chacha_for_case(seed, k)), &strategy.cfg);
    build_case(&plan, &strategy.cfg, name)
}

/// The value tree of generated case `k` of `seed` (for shrinking it).
pub fn case_tree(strategy: &CaseStrategy, seed: u64, k: u64) -> CaseTree {
    let mut runner = TestRunner::new_with_rng(Config::default(), crate::rng_for_case(seed, k));
    strategy.new_tree(&mut runner).expect("a case strategy always gives a tree")
}

#[derive(Clone, Debug)]
pub struct CaseStrategy {
    cfg: Arc<GenConfig>,
}

impl Strategy for CaseStrategy {
    type Tree = CaseTree;
    type Value = Case;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let plan = CasePlan::sample(&mut RngSource::new(runner.rng()), &self.cfg);
        Ok(CaseTree { plans: Plans::new(plan), cfg: Arc::clone(&self.cfg) })
    }
}

/// The value tree of [`CaseStrategy`].
pub struct CaseTree {
    plans: Plans<CasePlan>,
    cfg: Arc<GenConfig>,
}

impl ValueTree for CaseTree {
    type Value = Case;

    fn current(&self) -> Case {
        build_case(self.plans.current(), &self.cfg, "gen".to_owned())
    }

    fn simplify(&mut self) -> bool {
        self.plans.simplify()
    }

    fn complicate(&mut self) -> bool {
        self.plans.complicate()
    }
}

#[derive(Clone, Debug)]
pub struct TurnStrategy {
    cfg: Arc<GenConfig>,
}

impl Strategy for TurnStrategy {
    type Tree = TurnTree;
    type Value = Turn;

    fn new_tree(&self, runner: &mut TestRunner) -> NewTree<Self> {
        let plan = TurnPlan::sample(&mut RngSource::new(runner.rng()), &self.cfg, None);
        let id_seed = (runner.rng().next_u32() & 0xffff) as u16;
        Ok(TurnTree { plans: Plans::new(plan), id_seed, cfg: Arc::clone(&self.cfg) })
    }
}

/// The value tree of [`TurnStrategy`].
pub struct TurnTree {
    plans: Plans<TurnPlan>,
    id_seed: u16,
    cfg: Arc<GenConfig>,
}

impl ValueTree for TurnTree {
    type Value = Turn;

    fn current(&self) -> Turn {
        build_turn(self.plans.current(), &self.cfg, self.id_seed, 0, None).0
    }

    fn simplify(&mut self) -> bool {
        self.plans.simplify()
    }

    fn complicate(&mut self) -> bool {
        self.plans.complicate()
    }
}

/// Greedy shrinking over a plan: `base` is the simplest plan known to fail; candidates are
/// its simpler variants in [`Shrink`] order. A failing candidate becomes the new base and the
/// enumeration restarts; a passing one is dropped for the next. Every accepted step removes
/// an element or lowers a number, so shrinking terminates.
struct Plans<P> {
    base: P,
    /// The candidate under test, if any (otherwise the current value is `base`).
    trial: Option<P>,
    /// Index of the next candidate of `base` to try.
    next: usize,
}

impl<P: Shrink> Plans<P> {
    fn new(plan: P) -> Self {
        Plans { base: plan, trial: None, next: 0 }
    }

    fn current(&self) -> &P {
        self.trial.as_ref().unwrap_or(&self.base)
    }

    fn simplify(&mut self) -> bool {
        if let Some(failing) = self.trial.take() {
            // The candidate still fails: keep it.
            self.base = failing;
            self.next = 0;
        }
        self.advance()
    }

    fn complicate(&mut self) -> bool {
        // The candidate passed: try the next one. (Without a candidate there is nothing to go
        // back to: shrinking gave up at `base`.)
        self.trial.is_some() && self.advance()
    }

    fn advance(&mut self) -> bool {
        let mut k = self.next;
        self.trial = self.base.nth_simpler(&mut k);
        self.next += 1;
        self.trial.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_case_is_its_trees_value() {
        let strategy = case_strategy(&GenConfig::default());
        for k in 0..300 {
            let mut tree = case_tree(&strategy, 5, k).current();
            tree.name = format!("gen/5/{k}");
            let direct = generated_case(&strategy, 5, k, format!("gen/5/{k}"));
            assert_eq!(
                serde_json::to_string(&direct).unwrap(),
                serde_json::to_string(&tree).unwrap(),
                "case {k}"
            );
        }
    }
}
