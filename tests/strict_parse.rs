//! The hand-written strict parse (`toolcert_schema::document::parse_finite`, read straight
//! into a value) answers as the serde_json parses it replaced, value for value, on every
//! generated document and on cuts and damaged copies of them: the oracle's
//! (`parse_document_serde`) and the reference accumulator's (`parse_serde`, where an object
//! serde_json reads as a number is no level of nesting).

use toolcert::gen::strategy::{case_strategy, generated_case};
use toolcert::gen::GenConfig;
use toolcert::oracle::parse_document_serde;
use toolcert::reference::parse_serde;
use toolcert::scenario::Block;
use toolcert::schema::document::{parse_finite, parse_finite_containers};

fn agree(doc: &str) {
    let (got, want) = (parse_finite(doc), parse_document_serde(doc));
    // Numbers compare by their text (`arbitrary_precision`): the same spelling, not only value.
    assert_eq!(got.as_ref().map(ToString::to_string), want.as_ref().map(ToString::to_string), "{doc:.300}");
    assert_eq!(got, want, "{doc:.300}");
    assert_eq!(parse_finite_containers(doc), parse_serde(doc), "{doc:.300}");
}

#[test]
fn generated_documents_parse_as_serde_json_parses_them() {
    let configs = [
        GenConfig::default(),
        GenConfig { schema: true, ..GenConfig::default() },
        GenConfig { schema: true, max_args_size: 1 << 20, ..GenConfig::default() },
    ];
    let (mut docs, mut valid, mut state) = (0, 0, 0x2545_F491_4F6C_DD1Du64);
    for (c, cfg) in configs.iter().enumerate() {
        let strategy = case_strategy(cfg);
        // The huge documents (up to 1 MiB) are parsed four ways each: fewer cases of them.
        let cases = if cfg.max_args_size > 1 << 16 { 60 } else { 700u64 };
        for k in 0..cases {
            let case = generated_case(&strategy, 31 + c as u64, k, format!("gen/{c}/{k}"));
            for turn in &case.streams {
                for block in &turn.blocks {
                    let Block::Call(call) = block else { continue };
                    let doc = &call.arguments;
                    agree(doc);
                    docs += 1;
                    valid += usize::from(parse_finite(doc).is_some());
                    // A cut at every split point the case streams it at, and a few at random
                    // (on character boundaries), as a stream cut short leaves the buffer.
                    let mut cuts: Vec<usize> = call.splits.clone();
                    for _ in 0..4 {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        cuts.push(state as usize % (doc.len() + 1));
                    }
                    for mut cut in cuts {
                        cut = cut.min(doc.len());
                        while !doc.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        agree(&doc[..cut]);
                        if doc.len() > 4096 {
                            continue;
                        }
                        // The document with a byte sequence a parser must weigh spliced in.
                        for piece in ["\\", "\"", "\\ud800", "1e400", ",", "]", "}", "\u{1}"] {
                            agree(&format!("{}{piece}{}", &doc[..cut], &doc[cut..]));
                        }
                    }
                }
            }
        }
    }
    assert!(docs > 2000 && valid > docs / 3 && valid < docs, "{valid} of {docs} valid");
}
