//! `toolcert site`: the certification site built from a small fixture (reports made by
//! certifying builtin mutants with `--format jsonl --out`), and refused on bad input.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn toolcert(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolcert")).args(args).output().expect("toolcert runs")
}

/// A directory removed when the test ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let dir = std::env::temp_dir().join(format!("toolcert-site-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

/// Certifies `subject` at the events level into `root/repro/SDK/events/POLICY` (the corpus
/// layout) and copies its report to `root/reports/SDK--events--POLICY.jsonl`.
fn certify(root: &Path, sdk: &str, subject: &str, policy: &str, more: &[&str]) -> serde_json::Value {
    let out = root.join("repro").join(sdk).join("events").join(policy);
    let mut args = vec![
        "certify",
        "--subject",
        subject,
        "--level",
        "events",
        "--cases",
        "40",
        "--format",
        "jsonl",
        "--out",
    ];
    args.push(out.to_str().unwrap());
    args.extend(more);
    let o = toolcert(&args);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&o.stderr));
    let reports = root.join("reports");
    std::fs::create_dir_all(&reports).unwrap();
    let report = reports.join(format!("{sdk}--events--{policy}.jsonl"));
    std::fs::copy(out.join("report.jsonl"), &report)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    let text = std::fs::read_to_string(&report).unwrap();
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

/// `toolcert site` run from `root` with relative paths (the links must not depend on them).
fn build(root: &Path, notes: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolcert"))
        .current_dir(root)
        .args(["site", "--reports", "reports", "--out", "site", "--reproducers", "repro", "--notes"])
        .arg(notes)
        .output()
        .expect("toolcert runs")
}

/// Every `href="…"` and `src="…"` of a page.
fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for part in html.split(attr).skip(1) {
            out.push(part.split('"').next().unwrap().replace("&amp;", "&"));
        }
    }
    out
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[test]
fn a_site_from_mutant_reports_has_its_pages_bugs_and_working_links() {
    let s = scratch("fixture");
    let root = &s.0;
    let keyed = certify(root, "name-keyed", "builtin:mutant/name-keyed", "as-handed-over", &[]);
    // Priced too, for the cost rows (a small budget: what is checked is the table, not a time).
    let priced = ["--cost", "--cost-budget", "0.2", "--cost-floor", "none"];
    let cost = certify(root, "reference", "builtin:reference", "as-handed-over", &priced);
    let bugs: Vec<String> =
        keyed["bugs"].as_array().unwrap().iter().map(|b| b["id"].as_str().unwrap().to_string()).collect();
    assert!(!bugs.is_empty(), "the name-keyed mutant shows a bug");
    // A note for one of its bugs, with markup that must not pass through.
    let notes = root.join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join(format!("{}.md", bugs[0])), "Keyed by *name*: <script>alert(1)</script>\n")
        .unwrap();
    let own = format!(
        "The mutant that keys calls by name & not by index.\n\n## {}\n\nThis SDK's own word.\n",
        bugs[0]
    );
    std::fs::write(notes.join("name-keyed.md"), own).unwrap();

    let o = build(root, &notes);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let site = root.join("site");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    let page = std::fs::read_to_string(site.join("sdk/name-keyed.html")).unwrap();
    let reference = std::fs::read_to_string(site.join("sdk/reference.html")).unwrap();

    // The front page: a row per SDK, the mutant's failing tiers counted and linked, the
    // reference passing, and the documented column not tested (no such report).
    assert!(index.contains("<a href=\"sdk/name-keyed.html\">name-keyed</a>"), "{index}");
    assert!(index.contains("<a href=\"sdk/reference.html\">reference</a>"), "{index}");
    let row = |name: &str| {
        index.split(&format!(">{name}</a>")).nth(1).unwrap().split("</tr>").next().unwrap().to_string()
    };
    let keyed_row = row("name-keyed");
    let standard = keyed["tiers"].as_array().unwrap().iter().find(|t| t["tier"] == "standard").unwrap();
    let n = standard["bugs"].as_array().unwrap().len();
    assert!(n > 0);
    let word = format!("{n} bug{}", if n == 1 { "" } else { "s" });
    assert!(
        keyed_row.contains(&format!("href=\"sdk/name-keyed.html#tier-standard\">{word}</a>")),
        "{keyed_row}"
    );
    assert!(keyed_row.contains(">not tested<"), "no documented report: {keyed_row}");
    assert!(!row("reference").contains("bug"), "{}", row("reference"));
    assert!(row("reference").contains(">pass<"));

    // Every bug of the report, with its symptoms and its replay command.
    for b in keyed["bugs"].as_array().unwrap() {
        let id = b["id"].as_str().unwrap();
        assert!(page.contains(&format!("id=\"{id}\"")), "{id} has a section");
        for s in b["symptoms"].as_array().unwrap() {
            assert!(page.contains(&format!("<code>{}</code>", s.as_str().unwrap())), "{id}: symptom {s}");
        }
        assert!(page.contains(&unescape_free(b["replay"].as_str().unwrap())), "{id}: replay");
    }
    assert!(reference.contains("0 bugs in 1 report,"), "the reference has none");

    // The cost rows: on the priced SDK's page, one per workload; none on the other.
    let workloads = cost["cost"]["workloads"].as_array().expect("a priced report");
    assert!(reference.contains("id=\"cost\""));
    for w in workloads {
        assert!(reference.contains(&format!("<td>{}</td>", w["name"].as_str().unwrap())), "{w}");
    }
    assert!(!page.contains("id=\"cost\""));

    // The reproducer's bytes are shown exactly (escaped) in a <pre>.
    let first = &keyed["bugs"][0];
    let scenario = first["replay"].as_str().unwrap().rsplit("--scenario ").next().unwrap().to_string();
    let txt = std::fs::read_to_string(Path::new(&scenario).with_extension("txt")).unwrap();
    let pre = page.split(&format!("id=\"{}\"", bugs[0])).nth(1).unwrap();
    let pre = pre.split("<pre class=\"bytes\">").nth(1).unwrap().split("</pre>").next().unwrap();
    assert_eq!(unescape(pre), txt);
    assert!(txt.contains('"') && pre.contains("&quot;"), "quotes are escaped");

    // Escaping: the note's markup is text; the SDK note is rendered.
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "a note's markup is escaped");
    assert!(!page.contains("<script"), "no script on any page");
    assert!(page.contains("<em>name</em>"));
    assert!(page.contains("by name &amp; not by index"));
    let section =
        page.split(&format!("id=\"{}\"", bugs[0])).nth(1).unwrap().split("<div class=\"bug ").next().unwrap();
    assert!(section.contains("This SDK's own word."), "{section}");

    // Badges: one per SDK and tier, linked from the page with the Markdown to embed them.
    for key in ["standard", "compatible", "endings", "endings-documented", "strict", "faulty", "numbers"] {
        let badge = site.join(format!("badges/name-keyed-{key}.svg"));
        let svg = std::fs::read_to_string(&badge).unwrap_or_else(|e| panic!("{}: {e}", badge.display()));
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(page.contains(&format!("](badges/name-keyed-{key}.svg)")), "the Markdown for {key}");
    }

    // Every relative link of every page resolves to a file; nothing external is loaded.
    let mut checked = BTreeSet::new();
    for (dir, html) in [(site.clone(), &index), (site.join("sdk"), &page), (site.join("sdk"), &reference)] {
        assert!(!html.contains("http://") && !html.contains("https://"), "self-contained");
        for link in links(html) {
            let path = link.split('#').next().unwrap();
            if path.is_empty() {
                let anchor = link.trim_start_matches('#');
                assert!(html.contains(&format!("id=\"{anchor}\"")), "anchor {link}");
                continue;
            }
            assert!(!path.starts_with('/') && !path.contains(':'), "relative: {link}");
            let target = dir.join(path);
            assert!(target.is_file(), "{link} from {} resolves", dir.display());
            checked.insert(target);
        }
    }
    assert!(checked.len() > 10, "{checked:?}");

    // The same inputs give the same bytes.
    let again = build(root, &notes);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(site.join("sdk/name-keyed.html")).unwrap(), page);

    // An SDK note's section for a bug of another SDK stops the build, naming the note.
    std::fs::write(notes.join("reference.md"), format!("Intro.\n\n## {}\n\nNot here.\n", bugs[0])).unwrap();
    let o = build(root, &notes);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("reference.md") && err.contains(&bugs[0]), "{err}");
    std::fs::remove_file(notes.join("reference.md")).unwrap();

    // A note for a bug no report contains stops the build, naming the note.
    std::fs::write(notes.join("BUG-00000000.md"), "Fixed long ago.\n").unwrap();
    let o = build(root, &notes);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("BUG-00000000.md") && err.contains("no report"), "{err}");
}

/// The replay command as the page shows it, escaped.
fn unescape_free(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn bad_input_is_refused_with_a_clear_error_and_exit_2() {
    let s = scratch("bad");
    let root = &s.0;
    let none = root.join("notes");
    // No reports directory.
    let o = build(root, &none);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot read the reports directory") && err.contains("reports"), "{err}");
    // An empty one.
    std::fs::create_dir_all(root.join("reports")).unwrap();
    let o = build(root, &none);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no JSONL reports"));
    // A malformed report: named, with the line.
    std::fs::write(root.join("reports/x--events--as-handed-over.jsonl"), "{\"record\":\"header\"\n").unwrap();
    let o = build(root, &none);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("x--events--as-handed-over.jsonl") && err.contains("line 1"), "{err}");
    // A report cut before its footer.
    std::fs::write(
        root.join("reports/x--events--as-handed-over.jsonl"),
        toolcert(&["certify", "--cases", "1", "--format", "jsonl"])
            .stdout
            .split(|&b| b == b'\n')
            .next()
            .unwrap(),
    )
    .unwrap();
    let o = build(root, &none);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no footer"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!root.join("site/index.html").exists(), "nothing half-built is left as if whole");
}
