//! The `.sse` corpus: every file replays through the reference and meets its expectation,
//! every file still says what its scenario says, and bad files get errors that name the
//! file, the line and the problem. `TOOLCERT_BLESS=1 cargo test --test corpus` rewrites the
//! corpus from the named cases (as `toolcert corpus write` does).

use std::path::Path;

use toolcert::corpus;
use toolcert::reference::ReferenceSubject;

fn dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/corpus"))
}

#[test]
fn the_corpus_replays_through_the_reference_and_is_up_to_date() {
    if std::env::var_os("TOOLCERT_BLESS").is_some() {
        corpus::write(dir()).unwrap();
    }
    let checked = corpus::check(dir(), &toolcert::reference::ReferenceSubject).unwrap();
    assert!(checked.len() >= 40, "{} corpus cases", checked.len());
    for d in ["anthropic", "openai-chat", "openai-responses"] {
        assert!(checked.iter().any(|c| c.path.starts_with(dir().join(d))), "no {d} cases");
    }
    let problems: Vec<String> = checked
        .iter()
        .filter(|c| !c.problems.is_empty())
        .map(|c| format!("{}: {}", c.path.display(), c.problems.join("; ")))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_seeds_own_traces_are_in_the_corpus() {
    for id in [
        "anthropic/deltas/lookup-order-a4471",
        "anthropic/keying/refunded-open-pair",
        "openai-chat/keying/refunded-open-interleaved",
        "anthropic/final/create-ticket-max-tokens",
        "openai-responses/final/create-ticket-max-tokens",
    ] {
        assert!(dir().join(format!("{id}.sse")).exists(), "{id}.sse");
    }
}

#[test]
fn a_broken_expectation_file_names_file_line_and_problem() {
    let tmp = std::env::temp_dir().join(format!("toolcert-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let sse = tmp.join("x.sse");
    std::fs::copy(dir().join("anthropic/deltas/lookup-order-a4471.sse"), &sse).unwrap();
    std::fs::write(tmp.join("x.expect.json"), "{\n  \"format\": 1,\n  \"id\": 7\n}\n").unwrap();
    let err = corpus::replay(&sse, &ReferenceSubject, None, None, 0).unwrap_err();
    assert!(err.contains("x.expect.json:3:"), "{err}");
    std::fs::remove_file(tmp.join("x.expect.json")).unwrap();
    // Invalid UTF-8 on the third line of the stream.
    std::fs::write(&sse, b"event: ping\ndata: {}\n\ndata: \xff\n\n").unwrap();
    let err = corpus::replay(&sse, &ReferenceSubject, Some(toolcert::scenario::Dialect::Anthropic), None, 0)
        .unwrap_err();
    assert!(err.contains("x.sse:4:") && err.contains("UTF-8"), "{err}");
    // A Chat entry whose index is a string is a faulty stream, not an unreadable file: the
    // subject is fed it and fails the turn as malformed, naming the field. (An entry without
    // an index is no defect: some servers never send one.)
    std::fs::write(&sse, b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":\"0\",\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n").unwrap();
    let r = corpus::replay(&sse, &ReferenceSubject, Some(toolcert::scenario::Dialect::OpenAiChat), None, 0)
        .unwrap();
    let e = r.observation.error.expect("the turn fails").value;
    assert_eq!(e.class, toolcert::subject::ErrorClass::Malformed);
    assert!(e.detail.contains("index"), "{}", e.detail);
    // Bytes that are no SSE stream at all are still refused, naming the line.
    std::fs::write(&sse, b"data: ok\n\ndata: \xff\n\n").unwrap();
    let err = corpus::replay(&sse, &ReferenceSubject, Some(toolcert::scenario::Dialect::OpenAiChat), None, 0)
        .unwrap_err();
    assert!(err.contains("x.sse:3:") && err.contains("UTF-8"), "{err}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Hand-written streams, as the providers document them, replay with their dialect detected
/// and show the tool calls with their ids, names and arguments.
#[test]
fn hand_written_streams_replay_with_the_dialect_detected() {
    let data = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/crates/dialect/tests/data"));
    for (file, dialect, ids) in [
        ("anthropic.sse", "anthropic", ["toolu_01Ka8fWqKz2TbN4xQ1v7sEuR", "toolu_01MbC3yHn6pLd9GvR2wX5tJk"]),
        (
            "openai-chat.sse",
            "openai-chat",
            ["call_8Hs1qkX2Lz0aRt9BcV3mNwYe", "call_9Jt2pLm4Qx7bYc1DfG5hKsUo"],
        ),
        (
            "openai-responses.sse",
            "openai-responses",
            ["call_Kf3sN8vQ2mT6xR1pW9bY4hLc", "call_Vd7gH2jK5nP8rT0wZ3xC6bM1"],
        ),
    ] {
        let r = corpus::replay(&data.join(file), &ReferenceSubject, None, None, 0).unwrap();
        assert_eq!(r.dialect.name(), dialect);
        let json = r.to_json();
        let calls = json["calls"].as_array().unwrap();
        let got: Vec<&str> = calls.iter().map(|c| c["call_id"].as_str().unwrap()).collect();
        assert_eq!(got, ids, "{file}: {json:#}");
        for c in calls {
            assert_eq!(c["outcome"], "dispatchable", "{file}: {c}");
            assert!(c["args"].is_object() && c["name"].is_string(), "{file}: {c}");
        }
    }
}
