//! Digests of generated cases, to hold a generator change to a baseline binary:
//! `cargo run --release -p toolcert-gen --example gen_digest [cases] [seeds...]`.
//!
//! For each configuration (the default, the schema profile, huge documents up to 1 MiB, the
//! transport with corruption, each shape alone) and seed, prints an FNV-1a digest of the
//! serde_json form of cases `0..cases` (`gen/{seed}/{k}`). Two builds that print the same
//! lines generate the same cases. With `cases` negative, only generates `-cases` cases of
//! the default configuration and seed 1 (no serialization: what callgrind should see).

use toolcert_gen::{case_strategy, strategy::generated_case, GenConfig, ShapeMix};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: i64 = args.next().map_or(20_000, |a| a.parse().expect("a case count"));
    let seeds: Vec<u64> = args.map(|a| a.parse().expect("a seed")).collect();
    let seeds = if seeds.is_empty() { vec![1, 7, 12345] } else { seeds };
    if n < 0 {
        let strategy = case_strategy(&GenConfig { schema: true, ..GenConfig::default() });
        let mut x = 0;
        for k in 0..n.unsigned_abs() {
            x += generated_case(&strategy, 1, k, format!("gen/1/{k}")).streams.len();
        }
        println!("{x}");
        return;
    }
    let configs: [(&str, GenConfig); 6] = [
        ("default", GenConfig::default()),
        ("schema", GenConfig { schema: true, ..GenConfig::default() }),
        ("huge", GenConfig { schema: true, max_args_size: 1 << 20, ..GenConfig::default() }),
        ("transport", GenConfig { transport: true, corrupt: true, ..GenConfig::default() }),
        ("per_call", GenConfig { shape_mix: ShapeMix::PerCall, schema: true, ..GenConfig::default() }),
        ("interleaved", GenConfig { shape_mix: ShapeMix::Interleaved, ..GenConfig::default() }),
    ];
    for (name, cfg) in &configs {
        let strategy = case_strategy(cfg);
        for &seed in &seeds {
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            for k in 0..n as u64 {
                let case = generated_case(&strategy, seed, k, format!("gen/{seed}/{k}"));
                for &b in serde_json::to_string(&case).expect("a case serializes").as_bytes() {
                    h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                }
            }
            println!("{name} seed {seed} cases {n}: {h:016x}");
        }
    }
}
