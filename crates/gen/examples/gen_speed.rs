//! Generation speed: `cargo run --release -p toolcert-gen --example gen_speed [cases]`.
//!
//! Draws cases from a seeded runner the way a run does (strategy `new_tree` + `current`,
//! which samples a plan and builds the case) and prints cases per second. Generation only:
//! no rendering, no subject, no oracle.

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, TestRunner};
use toolcert_gen::{case_strategy, rng_for_seed, GenConfig};
fn main() {
    let n: usize = std::env::args().nth(1).map_or(300_000, |a| a.parse().unwrap());
    let strategy = case_strategy(&GenConfig::default());
    let mut runner = TestRunner::new_with_rng(Config::default(), rng_for_seed(1));
    let t = std::time::Instant::now();
    let mut x = 0;
    for _ in 0..n {
        let c = strategy.new_tree(&mut runner).unwrap().current();
        x += c.streams.len();
    }
    println!("{:.0} cases/s {x}", n as f64 / t.elapsed().as_secs_f64());
}
