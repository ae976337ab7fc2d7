//! A toolcert adapter for the `genai` crate (0.7.2): certifies the tool calls genai
//! accumulates from a streamed response, at the bytes level, in every dialect it speaks.
//!
//! ```text
//! toolcert certify --subject 'exec:examples/sdks/rust/target/release/toolcert-genai' \
//!     --level bytes --dialect anthropic --no-schema
//! ```
//!
//! genai only takes a base URL, so the adapter runs toolcert's mock provider
//! (`toolcert-serve`) in-process on 127.0.0.1. For each stream of a `run` it queues the
//! stream's transport chunks on the dialect's endpoint (one HTTP chunk each; the stream then
//! closes, drops the connection or stays open, as the stream's `end` says), points genai at
//! the mock, consumes `exec_chat_stream` the way genai's own example does (`result?` on every
//! event, the captured content of the `End` event as the message), and reports what genai
//! handed over (`sdk.rs` says how that maps onto outcomes).
//!
//! It speaks toolcert's subprocess protocol (docs/PROTOCOL.md, version 1) with
//! `serde_json::Value`s rather than `toolcert-exec`'s types, so no toolcert crate but the mock
//! is linked in (see Cargo.toml on features).

use std::io::{BufRead, Write};

use serde_json::{json, Value};

mod frames;
mod sdk;

const PROTOCOL_VERSION: u64 = 1;

/// Why a case got no results. (Nothing is skipped: every bytes-level case can be served;
/// settings genai cannot take are refused at `configure`.)
enum NoResults {
    /// `errored`: the adapter itself failed (a bug here, not a finding about genai).
    Errored(String),
}

fn main() {
    let policy = policy();
    sdk::DOCUMENTED.store(policy == "documented", std::sync::atomic::Ordering::Relaxed);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fatal(&format!("cannot start a tokio runtime: {e}")));
    let mut sdk = sdk::Sdk::start().unwrap_or_else(|e| fatal(&e));
    let mut dialect: Option<sdk::Dialect> = None;
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lines() {
        let line = line.unwrap_or_else(|e| fatal(&format!("cannot read stdin: {e}")));
        if line.trim().is_empty() {
            continue;
        }
        let request: Value =
            serde_json::from_str(&line).unwrap_or_else(|e| fatal(&format!("a request is not JSON: {e}")));
        let reply = match request["cmd"].as_str() {
            Some("start") => start_reply(&policy),
            Some("configure") => configure(&request, &mut dialect),
            Some("run") => {
                let seq = request["seq"].clone();
                // elapsed_ns (docs/PROTOCOL.md): this thread's CPU time over the run, which is
                // genai's request, HTTP client, SSE decoding and accumulation; the mock
                // provider serves on a thread of its own and is not in it.
                let started = toolcert_sdk_adapter::thread_cpu();
                let outcome = match dialect {
                    Some(d) => runtime.block_on(run(&mut sdk, d, &request["case"])),
                    None => Err(NoResults::Errored("run before configure".into())),
                };
                let elapsed = toolcert_sdk_adapter::thread_cpu().saturating_sub(started).as_nanos() as u64;
                match outcome {
                    Ok(results) => json!({"seq": seq, "results": results, "elapsed_ns": elapsed}),
                    Err(NoResults::Errored(message)) => {
                        json!({"seq": seq, "errored": true, "context": {"message": message}})
                    }
                }
            }
            Some("stop") => return,
            other => fatal(&format!("unknown command {other:?}")),
        };
        let written = writeln!(stdout, "{reply}").and_then(|()| stdout.flush());
        if let Err(e) = written {
            fatal(&format!("cannot write a reply: {e}"));
        }
    }
}

fn fatal(message: &str) -> ! {
    eprintln!("toolcert-genai: {message}");
    std::process::exit(2);
}

/// The caller policy: `--policy NAME` on the command line, else TOOLCERT_POLICY, else
/// `as-handed-over` (docs/CERTIFICATION.md, "Caller policies").
fn policy() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let policy = match args.iter().position(|a| a == "--policy") {
        Some(i) => args.get(i + 1).cloned().unwrap_or_default(),
        None => std::env::var("TOOLCERT_POLICY").unwrap_or_else(|_| "as-handed-over".into()),
    };
    if policy != "as-handed-over" && policy != "documented" {
        fatal(&format!("unknown caller policy {policy:?} (one of as-handed-over, documented)"));
    }
    policy
}

fn start_reply(policy: &str) -> Value {
    json!({"version": PROTOCOL_VERSION, "implementation": {
        "name": "genai",
        "language": "rust",
        "version": sdk::GENAI_VERSION,
        "homepage": "https://crates.io/crates/genai",
        // genai hands over whole responses from an HTTP body: only the bytes level exists.
        "levels": ["bytes"],
        "dialects": sdk::Dialect::ALL.iter().map(|d| d.name()).collect::<Vec<_>>(),
        // Every server profile's wire behaviours (docs/SPEC.md, "Server profiles"): an SDK
        // reads whatever bytes come. Kept equal to toolcert's list by tests/profiles.rs.
        "quirks": ["chat_index_zero", "chat_repeat_fields", "chat_repeat_id", "chat_empty_continuations", "chat_no_index", "chat_whole_calls", "chat_sparse_index", "chat_split_entries", "chat_repeat_on_finish", "chat_content_filters", "chat_late_name", "responses_done_only", "responses_rotating_item_id", "responses_hosted_items", "anthropic_input_in_start", "anthropic_content_in_start", "gemini_partial_args", "hostile"],
        "policy": policy,
        "policy_doc": "https://docs.rs/genai/0.7.2/genai/chat/struct.StreamEnd.html",
        // genai does not validate arguments against tool schemas.
        "capabilities": [],
    }})
}

fn configure(request: &Value, dialect: &mut Option<sdk::Dialect>) -> Value {
    *dialect = None;
    if request["level"] != "bytes" {
        return json!({"ok": false, "reason": "genai is fed an HTTP response body: only the bytes level"});
    }
    match request["dialect"].as_str().and_then(sdk::Dialect::from_name) {
        Some(d) => {
            *dialect = Some(d);
            json!({"ok": true})
        }
        None => json!({"ok": false, "reason": format!("unknown dialect {}", request["dialect"])}),
    }
}

/// Runs every stream of a case through genai; one result per stream, in the case's order.
async fn run(sdk: &mut sdk::Sdk, dialect: sdk::Dialect, case: &Value) -> Result<Vec<Value>, NoResults> {
    let streams =
        case["streams"].as_array().ok_or_else(|| NoResults::Errored("a case without streams".into()))?;
    // Each stream is its own HTTP request with its own genai stream (and accumulator): they
    // run one after another, in the order the harness first delivers to them. Interleaving
    // them would only interleave requests, not what genai accumulates.
    let mut order: Vec<usize> = Vec::with_capacity(streams.len());
    for step in case["order"].as_array().into_iter().flatten() {
        if let Some(s) = step[0].as_u64().map(|s| s as usize) {
            if s < streams.len() && !order.contains(&s) {
                order.push(s);
            }
        }
    }
    order.extend((0..streams.len()).filter(|s| !order.contains(s)).collect::<Vec<_>>());
    let mut results = vec![Value::Null; streams.len()];
    for s in order {
        results[s] = sdk.run_stream(dialect, &streams[s]).await?;
    }
    Ok(results)
}
