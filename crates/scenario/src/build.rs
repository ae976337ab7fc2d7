//! Builders of scenario values for hand-written turns: a call or a text block sent as
//! exactly the given fragments, and turns of each shape. The one place the named cases and
//! the tests build turns by hand.

use crate::{Block, Call, Ending, Interleave, Shape, TextBlock, Turn};

/// A call sent as exactly these fragments.
pub fn call(index: u32, call_id: &str, name: &str, fragments: &[&str]) -> Block {
    let mut splits = Vec::new();
    let mut at = 0;
    for f in &fragments[..fragments.len().saturating_sub(1)] {
        at += f.len();
        splits.push(at);
    }
    Block::Call(Call {
        index,
        call_id: call_id.into(),
        name: name.into(),
        arguments: fragments.concat(),
        splits,
    })
}

/// A text block sent as exactly these deltas.
pub fn text(deltas: &[&str]) -> Block {
    let Block::Call(c) = call(0, "", "", deltas) else { unreachable!() };
    Block::Text(TextBlock { text: c.arguments, splits: c.splits })
}

/// An Anthropic-shaped turn.
pub fn per_call(blocks: Vec<Block>, ending: Ending) -> Turn {
    Turn {
        tools: vec![],
        blocks,
        shape: Shape::PerCall,
        ending,
        faults: vec![],
        pings: vec![],
        transport: Default::default(),
        wire: Default::default(),
    }
}

/// An OpenAI-Chat-shaped turn whose pieces are sent in `order` (block positions), with the
/// interleave's chunk `joins`.
pub fn interleaved(blocks: Vec<Block>, order: Vec<u16>, joins: Vec<bool>, ending: Ending) -> Turn {
    Turn { shape: Shape::Interleaved(Interleave { order, joins }), ..per_call(blocks, ending) }
}
