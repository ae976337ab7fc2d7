//! The JUnit report validates against a JUnit XML schema (`tests/data/junit.xsd`, after the
//! Jenkins/Ant schema CI servers read): with `xmllint --schema` when it is installed (`.ci/run`
//! installs it), otherwise with a structural check of the same rules written here.

use std::path::Path;
use std::process::Command;

use toolcert_oracle::Grade;
use toolcert_runner::baseline::{Baseline, Entry};
use toolcert_runner::formats::to_junit;
use toolcert_runner::{Certification, Report};
use toolcert_subject::{subject_fn, Accumulator, Emit, Event, StreamEnd, StreamSpec, TurnError};

struct Silent;

impl Accumulator for Silent {
    fn on_event(&mut self, _: &Event<'_>, _: &mut Emit) -> Result<(), TurnError> {
        Ok(())
    }
    fn finish(&mut self, _: StreamEnd, _: &mut Emit) -> Result<(), TurnError> {
        Ok(())
    }
}

struct Panics;

impl Accumulator for Panics {
    fn on_event(&mut self, _: &Event<'_>, _: &mut Emit) -> Result<(), TurnError> {
        panic!("a <panic> & \"quotes\" \u{1} \n in the message")
    }
    fn finish(&mut self, _: StreamEnd, _: &mut Emit) -> Result<(), TurnError> {
        Ok(())
    }
}

/// JUnit documents covering every element the report writes: failures, skipped testcases
/// (should at the must grade, schema off, baseline), stale entries, cases not run.
fn documents() -> Vec<(&'static str, String)> {
    let silent = subject_fn("silent", |_: &StreamSpec<'_>| Silent);
    let failing = Certification { cases: 40, seed: 3, ..Default::default() }.run(&silent);
    let must_no_schema = Certification {
        cases: 10,
        grade: Grade::Must,
        profile: toolcert_oracle::Profile { schema: false, ..Default::default() },
        ..Default::default()
    }
    .run(&silent);
    let mut baselined: Report = failing.clone();
    let mut baseline = Baseline::from_report(&baselined);
    baseline.expected_failures.push(Entry {
        case: "named/deltas/lookup-order-a4471".into(),
        invariant: Some(toolcert_oracle::Invariant::AccOrder),
        reason: None,
    });
    baselined.baseline = Some(baseline.check(&baselined));
    assert!(!baselined.baseline.as_ref().unwrap().stale.is_empty());
    let crashing = Certification { cases: 5, ..Default::default() }
        .run(&subject_fn("a \"quoted\" <subject>", |_: &StreamSpec<'_>| Panics));
    let passing = Certification { named: false, ..Default::default() }.run(&silent);
    vec![
        ("failing", to_junit(&failing)),
        ("must, no schema", to_junit(&must_no_schema)),
        ("baselined with a stale entry", to_junit(&baselined)),
        ("crashing", to_junit(&crashing)),
        ("passing", to_junit(&passing)),
    ]
}

fn xsd() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/junit.xsd"))
}

fn xmllint() -> bool {
    Command::new("xmllint").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// `Err(xmllint's complaint)` when `doc` does not validate.
fn validate_with_xmllint(doc: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("toolcert-junit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{:x}.xml", doc.len() ^ doc.bytes().map(usize::from).sum::<usize>()));
    std::fs::write(&file, doc).unwrap();
    let out = Command::new("xmllint").arg("--noout").arg("--schema").arg(xsd()).arg(&file).output().unwrap();
    let _ = std::fs::remove_file(&file);
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn the_junit_report_validates_against_the_junit_schema() {
    let docs = documents();
    if xmllint() {
        for (what, doc) in &docs {
            if let Err(e) = validate_with_xmllint(doc) {
                panic!("the {what} JUnit report does not validate:\n{e}\n{doc}");
            }
        }
        // The check can fail: a testsuite without its required `tests` attribute.
        let broken = docs[0].1.replacen(" tests=\"2\"", "", 1);
        assert!(validate_with_xmllint(&broken).is_err(), "xmllint accepted a testsuite without tests");
    } else {
        assert!(
            std::env::var_os("TOOLCERT_REQUIRE_XMLLINT").is_none(),
            "TOOLCERT_REQUIRE_XMLLINT is set but xmllint is not installed (apt-get install libxml2-utils)"
        );
        eprintln!("xmllint not installed: checking the JUnit structure without it");
    }
    for (what, doc) in &docs {
        if let Err(e) = structure::check(doc) {
            panic!("the {what} JUnit report is malformed: {e}\n{doc}");
        }
    }
    assert!(structure::check(&docs[0].1.replacen("<testcase ", "<testcas ", 1)).is_err());
    assert!(structure::check(&docs[0].1.replacen("</testsuite>", "", 1)).is_err());
}

/// The schema's rules, checked by a small XML reader (used with or without xmllint).
mod structure {
    struct Element {
        name: String,
        attrs: Vec<(String, String)>,
        children: Vec<Element>,
    }

    impl Element {
        fn attr(&self, name: &str) -> Option<&str> {
            self.attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
        }
        fn names(&self) -> Vec<&str> {
            self.children.iter().map(|c| c.name.as_str()).collect()
        }
    }

    fn parse(doc: &str) -> Result<Element, String> {
        let body =
            doc.strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n").ok_or("no XML declaration")?;
        let mut stack: Vec<Element> = vec![Element { name: String::new(), attrs: vec![], children: vec![] }];
        let mut rest = body;
        while let Some(open) = rest.find('<') {
            check_text(&rest[..open])?;
            rest = &rest[open + 1..];
            let close = rest.find('>').ok_or("an unclosed tag")?;
            let tag = &rest[..close];
            rest = &rest[close + 1..];
            if let Some(name) = tag.strip_prefix('/') {
                let e = stack.pop().ok_or("a close tag without an open one")?;
                if e.name != name {
                    return Err(format!("</{name}> closes <{}>", e.name));
                }
                stack.last_mut().ok_or("unbalanced")?.children.push(e);
                continue;
            }
            let empty = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let (name, mut attrs_text) = tag.split_once(' ').unwrap_or((tag, ""));
            let mut attrs = Vec::new();
            while let Some(eq) = attrs_text.find("=\"") {
                let key = attrs_text[..eq].trim().to_string();
                let after = &attrs_text[eq + 2..];
                let end = after.find('"').ok_or("an unterminated attribute")?;
                check_text(&after[..end])?;
                attrs.push((key, after[..end].to_string()));
                attrs_text = &after[end + 1..];
            }
            if !attrs_text.trim().is_empty() {
                return Err(format!("junk in <{name}>: {attrs_text:?}"));
            }
            let e = Element { name: name.to_string(), attrs, children: vec![] };
            if empty {
                stack.last_mut().ok_or("unbalanced")?.children.push(e);
            } else {
                stack.push(e);
            }
        }
        check_text(rest)?;
        let mut root = stack.pop().ok_or("unbalanced")?;
        if !stack.is_empty() || root.children.len() != 1 {
            return Err("unclosed elements, or not one root element".into());
        }
        Ok(root.children.remove(0))
    }

    /// Character data: entities only from the predefined set and numeric references, no
    /// control characters XML 1.0 forbids.
    fn check_text(s: &str) -> Result<(), String> {
        if s.chars().any(|c| (c as u32) < 0x20 && !matches!(c, '\n' | '\t' | '\r')) {
            return Err(format!("a control character in {s:?}"));
        }
        let mut rest = s;
        while let Some(amp) = rest.find('&') {
            let semi = rest[amp..].find(';').ok_or("a bare &")? + amp;
            let entity = &rest[amp + 1..semi];
            let known = matches!(entity, "amp" | "lt" | "gt" | "quot" | "apos")
                || entity.strip_prefix('#').is_some_and(|n| n.parse::<u32>().is_ok());
            if !known {
                return Err(format!("an unknown entity &{entity};"));
            }
            rest = &rest[semi + 1..];
        }
        Ok(())
    }

    fn count(e: &Element, attr: &str, required: bool) -> Result<(), String> {
        match e.attr(attr) {
            None if required => Err(format!("<{}> without {attr}", e.name)),
            None => Ok(()),
            Some(v) => {
                v.parse::<u64>().map(|_| ()).map_err(|_| format!("<{}> {attr}={v:?} is not a count", e.name))
            }
        }
    }

    pub fn check(doc: &str) -> Result<(), String> {
        let root = parse(doc)?;
        if root.name != "testsuites" {
            return Err(format!("the root is <{}>", root.name));
        }
        for a in ["tests", "failures", "errors", "skipped"] {
            count(&root, a, false)?;
        }
        for suite in &root.children {
            if suite.name != "testsuite" {
                return Err(format!("<{}> in <testsuites>", suite.name));
            }
            suite.attr("name").ok_or("a testsuite without a name")?;
            count(suite, "tests", true)?;
            for a in ["failures", "errors", "skipped"] {
                count(suite, a, false)?;
            }
            let names = suite.names();
            let cases = names.iter().filter(|n| **n == "testcase").count();
            let props = names.iter().take_while(|n| **n == "properties").count();
            if props > 1 || names.len() != props + cases {
                return Err(format!("testsuite children out of order: {names:?}"));
            }
            if suite.attr("tests") != Some(cases.to_string().as_str()) {
                return Err(format!(
                    "testsuite {:?} says tests={:?} but has {cases}",
                    suite.attr("name"),
                    suite.attr("tests")
                ));
            }
            for child in &suite.children {
                match child.name.as_str() {
                    "properties" => {
                        for p in &child.children {
                            if p.name != "property" || p.attr("name").is_none() || p.attr("value").is_none() {
                                return Err("a malformed property".into());
                            }
                        }
                    }
                    _ => {
                        child.attr("name").ok_or("a testcase without a name")?;
                        let kinds: Vec<&str> = child.names();
                        let results = kinds
                            .iter()
                            .take_while(|k| matches!(**k, "failure" | "error" | "skipped"))
                            .count();
                        if results > 1 && kinds[..results].contains(&"skipped") {
                            return Err("a testcase both skipped and failed".into());
                        }
                        if !kinds[results..].iter().all(|k| matches!(*k, "system-out" | "system-err")) {
                            return Err(format!("testcase children out of order: {kinds:?}"));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
