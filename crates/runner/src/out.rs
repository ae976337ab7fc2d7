//! `--out DIR`: the JSONL report and a reproducer per failure kept in full.
//!
//! ```text
//! DIR/report.jsonl
//! DIR/failures/<case>.json        the scenario: `toolcert certify --scenario` replays it
//! DIR/failures/<case>.sse         wire and bytes levels: the exact SSE bytes fed (`.eventstream`
//!                                  for a binary-framed dialect's)
//! DIR/failures/<case>.expect.json  beside a single stream's `.sse`: its expectation, so the
//!                                  pair is a corpus case (`toolcert replay` judges it)
//! DIR/failures/<case>.stream-N.sse  the same, per stream of a multi-stream case
//! DIR/failures/<case>.txt         events level: the transcript
//! ```
//!
//! `<case>` is the case name with every character but ASCII letters, digits, `-` and `.`
//! replaced by `_` ([`crate::report::file_stem`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use toolcert_dialect::{render_bytes, render_wire};
use toolcert_render::render;
use toolcert_scenario::{Case, Dialect, Quirks};
use toolcert_subject::Level;

use crate::jsonl::to_jsonl;
use crate::report::{file_stem, Report};

/// The SSE bytes of each stream of `case` as the wire and bytes levels feed them (one
/// chunk after another), or why the dialect cannot speak it.
pub fn sse_bytes(case: &Case, dialect: Dialect, quirks: Quirks) -> Result<Vec<Vec<u8>>, String> {
    case.streams
        .iter()
        .map(|turn| {
            let neutral = render(turn);
            let wire = render_wire(turn, &neutral, dialect, quirks).map_err(|e| e.to_string())?;
            Ok(render_bytes(dialect, &wire, &turn.transport).chunks.concat())
        })
        .collect()
}

/// Each stream of `case` as a person reads what was sent: SSE as its bytes, a binary framing
/// (Bedrock's event stream, whose lengths and checksums are not text) as one line per message,
/// its type header and its payload; or why the dialect cannot speak it.
pub fn as_sent(case: &Case, dialect: Dialect, quirks: Quirks) -> Result<String, String> {
    let mut text = String::new();
    for turn in &case.streams {
        let neutral = render(turn);
        let wire = render_wire(turn, &neutral, dialect, quirks).map_err(|e| e.to_string())?;
        if wire.events.iter().all(|m| m.as_sse().is_some()) {
            text.push_str(&String::from_utf8_lossy(
                &render_bytes(dialect, &wire, &turn.transport).chunks.concat(),
            ));
            continue;
        }
        for f in wire.events.iter().filter_map(|m| m.as_frame()) {
            let kind = f.header(":event-type").or_else(|| f.header(":exception-type")).unwrap_or("?");
            let payload = String::from_utf8_lossy(&f.payload);
            text.push_str(&format!("{} {kind} {payload}\n", f.header(":message-type").unwrap_or("?")));
        }
    }
    Ok(text)
}

/// Writes the JSONL report and the reproducers into `dir` (created if needed); returns the
/// files written.
pub fn write_out(dir: &Path, report: &Report) -> Result<Vec<PathBuf>, String> {
    let jsonl = to_jsonl(report)?;
    let path = dir.join("report.jsonl");
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    std::fs::write(&path, jsonl).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut written = vec![path];
    written.extend(write_reproducers(dir, report)?);
    Ok(written)
}

/// Writes the reproducers of [`write_out`] alone (a streamed run wrote `report.jsonl` as it
/// went); returns the files written.
pub fn write_reproducers(dir: &Path, report: &Report) -> Result<Vec<PathBuf>, String> {
    let fail = |path: &Path, e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let failures = dir.join("failures");
    std::fs::create_dir_all(&failures).map_err(|e| fail(&failures, e))?;
    let mut written = Vec::new();
    let mut write = |path: PathBuf, bytes: &[u8]| -> Result<(), String> {
        std::fs::write(&path, bytes).map_err(|e| fail(&path, e))?;
        written.push(path);
        Ok(())
    };
    let mut stems = BTreeSet::new();
    for f in &report.failures {
        let base = file_stem(&f.case);
        let mut stem = base.clone();
        let mut n = 1;
        while !stems.insert(stem.clone()) {
            n += 1;
            stem = format!("{base}-{n}");
        }
        let mut scenario = serde_json::to_string_pretty(&f.scenario).expect("a scenario serialises");
        scenario.push('\n');
        write(failures.join(format!("{stem}.json")), scenario.as_bytes())?;
        // A damaged message placed as the run placed it (and dropped where it was not sent).
        let placed = match report.dialect {
            Some(d) => {
                let speech = toolcert_subject::driver::Speech { dialect: d, quirks: report.quirks() };
                crate::place_corrupt(
                    &f.scenario,
                    crate::Setting { level: report.level, speech, ..Default::default() },
                )
            }
            None => f.scenario.clone(),
        };
        let sse = match (report.level, report.dialect) {
            (Level::Wire | Level::Bytes, Some(d)) => sse_bytes(&placed, d, report.quirks()).ok(),
            _ => None,
        };
        // A binary-framed dialect's bytes are no SSE (corpus/README.md).
        let ext = if report.dialect.is_some_and(|d| toolcert_dialect::def(d).binary()) {
            "eventstream"
        } else {
            "sse"
        };
        // Each stream's bytes with its expectation (in the run's quirk profile), so `replay`
        // and `corpus check` judge it alone.
        let expectation = |s: usize, id: &str| {
            let turn = &placed.streams[s];
            let neutral = render(turn);
            let exp = toolcert_oracle::expect(
                turn,
                &neutral,
                toolcert_oracle::Profile { schema: report.schema, ..Default::default() },
            );
            let dialect = report.dialect.map(|d| d.name()).unwrap_or_default();
            let mut file =
                toolcert_oracle::corpus::ExpectationFile::from_expected(id, dialect, turn, neutral.end, &exp);
            file.quirks = report.quirks();
            serde_json::to_string_pretty(&file).expect("an expectation serialises") + "\n"
        };
        match sse {
            Some(streams) if streams.len() == 1 => {
                write(failures.join(format!("{stem}.{ext}")), &streams[0])?;
                let json = expectation(0, &format!("failures/{stem}"));
                write(failures.join(format!("{stem}.expect.json")), json.as_bytes())?;
            }
            Some(streams) => {
                for (s, bytes) in streams.iter().enumerate() {
                    write(failures.join(format!("{stem}.stream-{s}.{ext}")), bytes)?;
                    let json = expectation(s, &format!("failures/{stem}.stream-{s}"));
                    write(failures.join(format!("{stem}.stream-{s}.expect.json")), json.as_bytes())?;
                }
            }
            None => write(failures.join(format!("{stem}.txt")), f.transcript.as_bytes())?,
        }
    }
    Ok(written)
}
