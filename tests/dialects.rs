//! Text that lists the dialects, and the mock provider's endpoints (`toolcert-serve` depends
//! on no toolcert crate, so it keeps its own list), agree with the registry: a dialect added
//! to the registry and forgotten in one of them fails here.

use std::process::Command;

use toolcert::dialect::registry;
use toolcert_serve::Endpoint;

fn names() -> Vec<&'static str> {
    registry().iter().map(|d| d.name()).collect()
}

#[test]
fn the_mock_provider_has_each_dialects_endpoint() {
    let endpoints: Vec<&str> = Endpoint::ALL.iter().map(|e| e.name()).collect();
    assert_eq!(endpoints, names(), "one endpoint per dialect, in registry order");
    for (e, d) in Endpoint::ALL.into_iter().zip(registry()) {
        assert_eq!(e.path(), d.endpoint(), "{e}");
        assert_eq!(e.content_type(), d.content_type(), "{e}");
        assert_eq!(Endpoint::from_path(d.endpoint()), Some(e), "{e}");
        assert_eq!(e.to_string().parse::<Endpoint>(), Ok(e));
    }
    // Each path the mock serves is the dialect's that serves it, and the other way round.
    for path in
        ["/v1/messages", "/v1/chat/completions", "/v1/responses", "/model/m.x%3A0/converse-stream", "/v2/x"]
    {
        let by_registry = registry().iter().find(|d| d.serves(path)).map(|d| d.name());
        assert_eq!(Endpoint::from_path(path).map(Endpoint::name), by_registry, "{path}");
    }
}

#[test]
fn the_subprocess_protocols_schema_accepts_exactly_the_registrys_dialects() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/schemas/configure.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let listed: Vec<&str> = schema["properties"]["dialect"]["enum"]
        .as_array()
        .expect("configure.schema.json lists the dialects")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(listed, names());
}

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert")).args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The help of an option: its line and the lines indented under it.
fn option_help<'a>(text: &'a str, option: &str) -> String {
    let mut lines = text.lines().skip_while(|l| !l.trim_start().starts_with(option));
    let first = lines.next().unwrap_or_else(|| panic!("no {option} in\n{text}"));
    let rest = lines.take_while(|l| !l.trim_start().starts_with('-') && !l.trim().is_empty());
    std::iter::once(first).chain(rest).collect::<Vec<&'a str>>().join(" ")
}

#[test]
fn each_dialect_option_and_the_serve_help_name_every_dialect() {
    for command in ["certify", "replay", "serve"] {
        let text = option_help(&help(&[command]), "--dialect");
        for name in names() {
            assert!(text.contains(name), "`toolcert {command} --dialect` does not name {name}: {text}");
        }
    }
    let serve = help(&["serve"]);
    for name in names() {
        assert!(
            serve.lines().any(|l| l.trim_start().starts_with("POST /") && l.contains(&format!(" {name} "))),
            "`toolcert serve --help` lists no endpoint for {name}"
        );
    }
}
