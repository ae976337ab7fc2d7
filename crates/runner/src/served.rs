//! The streams `toolcert serve` puts behind the mock provider's endpoints: recorded files
//! (`.sse` or `.eventstream`, served as their exact bytes), the named corpus cases and the
//! generated cases of a bytes-level run, each rendered in the dialect of the endpoint asked.
//!
//! Where it sits: beside the corpus (it reads its cases and expectation files) and the
//! certification (it serves exactly the generated cases `certify --level bytes` runs); the
//! mock provider itself (`toolcert-serve`) knows nothing of toolcert and is only handed bytes.

use std::path::{Path, PathBuf};

use toolcert_oracle::Profile;
use toolcert_scenario::{Dialect, Quirks, Turn};
use toolcert_subject::driver::Speech;
use toolcert_subject::{Level, WireMessage};

use crate::corpus;
use crate::Certification;

/// What to serve.
#[derive(Clone, Debug, Default)]
pub struct Serving {
    /// Recorded streams, served as exact bytes on the endpoint of their dialect.
    pub files: Vec<PathBuf>,
    /// Serve the named cases whose id contains this (every named case when nothing else is
    /// asked for).
    pub case: Option<String>,
    /// How many generated cases to serve per dialect, and their seed.
    pub cases: usize,
    pub seed: u64,
    /// Only this dialect's endpoint.
    pub dialect: Option<Dialect>,
    /// Re-cut every stream into chunks of this many bytes (0: as its transport cuts it; a
    /// file whole).
    pub chunk: usize,
}

/// One stream to serve: its name in the log and its chunks.
pub type Stream = (String, Vec<Vec<u8>>);

/// The streams of each dialect, in [`Dialect::ALL`] order.
pub fn streams(serving: &Serving) -> Result<Vec<(Dialect, Vec<Stream>)>, String> {
    let mut lists: Vec<(Dialect, Vec<Stream>)> = Dialect::ALL.into_iter().map(|d| (d, Vec::new())).collect();
    let wanted = |d: Dialect| serving.dialect.is_none_or(|w| w == d);
    let slot =
        |d: Dialect| Dialect::ALL.iter().position(|&x| x == d).expect("every dialect is in Dialect::ALL");
    for path in &serving.files {
        let (dialect, bytes) = read_recorded(path, serving.dialect)?;
        let chunks = if serving.chunk == 0 {
            vec![bytes]
        } else {
            bytes.chunks(serving.chunk).map(<[u8]>::to_vec).collect()
        };
        lists[slot(dialect)].1.push((path.display().to_string(), chunks));
    }
    let named = serving.case.is_some() || (serving.cases == 0 && serving.files.is_empty());
    if named {
        let filter = serving.case.as_deref().unwrap_or("");
        for c in corpus::cases() {
            if wanted(c.dialect) && c.id.contains(filter) {
                if let Some(chunks) = render(&c.turn, c.dialect, serving.chunk) {
                    lists[slot(c.dialect)].1.push((c.id.clone(), chunks));
                }
            }
        }
    }
    for dialect in Dialect::ALL.into_iter().filter(|&d| wanted(d)).filter(|_| serving.cases > 0) {
        // Exactly the generated cases `certify --level bytes --dialect D` runs.
        let run = Certification {
            level: Level::Bytes,
            speech: Speech { dialect, quirks: Quirks::default() },
            profile: Profile { schema: false, ..Default::default() },
            ..Default::default()
        };
        for case in toolcert_gen::cases(&run.gen_config(), serving.seed).take(serving.cases) {
            let several = case.streams.len() > 1;
            for (s, turn) in case.streams.iter().enumerate() {
                let name =
                    if several { format!("{}#stream-{}", case.name, s + 1) } else { case.name.clone() };
                if let Some(chunks) = render(turn, dialect, serving.chunk) {
                    lists[slot(dialect)].1.push((name, chunks));
                }
            }
        }
    }
    Ok(lists)
}

/// The turn's bytes in `dialect`, cut as its transport says (or every `chunk` bytes); `None`
/// when the dialect cannot speak it.
fn render(turn: &Turn, dialect: Dialect, chunk: usize) -> Option<Vec<Vec<u8>>> {
    let neutral = toolcert_render::render(turn);
    let wire = toolcert_dialect::render_wire(turn, &neutral, dialect, Quirks::default()).ok()?;
    let chunks = toolcert_dialect::render_bytes(dialect, &wire, &turn.transport).chunks;
    if chunk == 0 {
        return Some(chunks.iter().map(<[u8]>::to_vec).collect());
    }
    Some(chunks.bytes().chunks(chunk).map(<[u8]>::to_vec).collect())
}

/// A recorded stream and its dialect: `given`, else its expectation file's, else the binary
/// dialect's for an `.eventstream` file, else detected from its SSE events.
pub fn read_recorded(path: &Path, given: Option<Dialect>) -> Result<(Dialect, Vec<u8>), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if let Some(d) = given {
        return Ok((d, bytes));
    }
    let exp = corpus::expectation_path(path);
    if exp.exists() {
        let file = corpus::read_expectation(&exp)?;
        let d = file.dialect.parse::<Dialect>().map_err(|e| format!("{}: {e}", exp.display()))?;
        return Ok((d, bytes));
    }
    if path.extension().is_some_and(|e| e == corpus::EVENTSTREAM_EXT) {
        if let Some(d) = toolcert_dialect::registry().iter().find(|d| d.binary()).map(|d| d.id()) {
            return Ok((d, bytes));
        }
    }
    let events = toolcert_sse::decode_all(&bytes)
        .map_err(|e| format!("{}: not a readable SSE stream: {e}", path.display()))?;
    let events: Vec<_> = events.into_iter().map(WireMessage::Sse).collect();
    let d = toolcert_dialect::detect(&events).ok_or_else(|| {
        format!("{}: cannot tell the dialect from the stream; pass --dialect", path.display())
    })?;
    Ok((d, bytes))
}
