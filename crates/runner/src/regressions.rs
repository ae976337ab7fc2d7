//! The regressions file of the Rust API: failing generated cases, shrunk and saved as
//! scenario values (one JSON object per line), replayed on every later run. Values, not
//! seeds: a seed stops reproducing its case when the generators change.

use std::io::Write;
use std::path::Path;

use crate::Report;
use toolcert_scenario::Case;

/// The saved cases; a missing file is an empty list. Errors name the file and line.
pub fn load(path: &Path) -> Result<Vec<Case>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(n, l)| {
            serde_json::from_str::<Case>(l)
                .map_err(|e| e.to_string())
                .and_then(|c| c.validate().map(|()| c))
                .map_err(|e| format!("{}:{}: not a saved scenario: {e}", path.display(), n + 1))
        })
        .collect()
}

/// Appends the reports' generated failures (shrunk) that are not saved yet, each once (a run
/// over several settings may keep the same counterexample in more than one).
pub fn append(path: &Path, saved: &[Case], reports: &[Report]) -> Result<(), String> {
    let mut new: Vec<Case> = Vec::new();
    let candidates = reports
        .iter()
        .flat_map(|r| &r.failures)
        .filter(|f| f.generated.is_some())
        .map(|f| Case { name: format!("regression/{}", f.case), ..f.scenario.clone() });
    for c in candidates {
        let same = |s: &Case| s.streams == c.streams && s.schedule == c.schedule;
        if !saved.iter().any(same) && !new.iter().any(same) {
            new.push(c);
        }
    }
    if new.is_empty() {
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let fresh = !path.exists();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    if fresh {
        text.push_str(
            "# toolcert regressions: failing cases, shrunk, replayed on every run. Commit this file.\n",
        );
    }
    for c in new {
        text.push_str(&serde_json::to_string(&c).expect("a scenario serialises"));
        text.push('\n');
    }
    file.write_all(text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}
