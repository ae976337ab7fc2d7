//! Prints generated cases readably: `cargo run -p toolcert-gen --example show [count] [skip]`.
//!
//! One line per stream (shape, ending, faults, pings) and one per block (text with its
//! split points; call with index, id, tool, exact argument bytes and split points), for
//! eyeballing what the generator makes for seed 1.

fn main() {
    let n: usize = std::env::args().nth(1).map_or(5, |a| a.parse().unwrap());
    let skip: usize = std::env::args().nth(2).map_or(0, |a| a.parse().unwrap());
    for c in toolcert_gen::cases(&toolcert_gen::GenConfig::default(), 1).skip(skip).take(n) {
        for t in &c.streams {
            println!(
                "--- {} shape={:?} ending={:?} faults={:?} pings={:?}",
                c.name, t.shape, t.ending, t.faults, t.pings
            );
            for b in &t.blocks {
                match b {
                    toolcert_scenario::Block::Text(x) => println!("  text {:?} {:?}", x.text, x.splits),
                    toolcert_scenario::Block::Call(x) => println!(
                        "  call #{} {} {} {} {:?}",
                        x.index, x.call_id, x.name, x.arguments, x.splits
                    ),
                    toolcert_scenario::Block::Foreign(x) => {
                        println!("  {} #{} {} {:?} {:?}", x.kind.name(), x.index, x.id, x.text, x.splits)
                    }
                }
            }
        }
    }
}
