//! What the Rust SDK adapters under `examples/sdks/rust` (rig-core, async-openai) share:
//! toolcert's subprocess protocol (docs/PROTOCOL.md, version 1, spoken with
//! `serde_json::Value`s so that no toolcert crate but the mock is linked), the in-process
//! mock provider each SDK is pointed at, and the CPU clock that times the SDK's
//! accumulation (`elapsed_ns`).
//!
//! An adapter implements [`Sdk`]: it is handed one stream of a `run` at a time (its chunks
//! already queued on the mock by [`Mock::serve`]) and returns that stream's result entry.
//! [`serve`] does the rest: handshake, `configure`, the order of a case's streams, the
//! timing, and the check that the SDK made exactly one streaming request per stream.

use std::future::Future;
use std::io::{BufRead, Write};
use std::time::Duration;

use base64::Engine as _;
use futures::{Stream, StreamExt as _};
use serde_json::{json, Value};
use toolcert_serve::{Config, MockProvider, Reply};
pub use toolcert_serve::{End, Endpoint};

pub const PROTOCOL_VERSION: u64 = 1;

/// A stream the SDK has not finished by then is reported as a crash: it would hang its
/// caller. 3 s, below the harness's own timeout per case, so the adapter answers first;
/// `TOOLCERT_STREAM_TIMEOUT` (seconds) sets another, for `toolcert bench`, whose largest
/// tiers take longer on the wall clock than that (examples/sdks/price-all.sh).
pub fn stream_timeout() -> Duration {
    static TIMEOUT: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *TIMEOUT.get_or_init(|| {
        std::env::var("TOOLCERT_STREAM_TIMEOUT")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .map_or(Duration::from_secs(3), Duration::from_secs_f64)
    })
}

/// For a stream the client cancels: once the mock has handed over every chunk, the caller
/// waits this long twice without an item from the SDK, then drops the stream.
pub const CANCEL_IDLE: Duration = Duration::from_millis(20);

/// The caller policy (docs/CERTIFICATION.md, "Caller policies").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Every call the SDK's final result offers is run, unless the SDK raised or marked it.
    AsHandedOver,
    /// The caller also makes the checks the SDK's documentation tells it to make.
    Documented,
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::AsHandedOver => "as-handed-over",
            Policy::Documented => "documented",
        }
    }

    /// `--policy NAME` on the command line, else TOOLCERT_POLICY, else `as-handed-over`.
    pub fn from_args() -> Result<Policy, String> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let name = match args.iter().position(|a| a == "--policy") {
            Some(i) => args.get(i + 1).cloned().unwrap_or_default(),
            None => std::env::var("TOOLCERT_POLICY").unwrap_or_else(|_| "as-handed-over".into()),
        };
        match name.as_str() {
            "as-handed-over" => Ok(Policy::AsHandedOver),
            "documented" => Ok(Policy::Documented),
            other => Err(format!("unknown caller policy {other:?} (one of as-handed-over, documented)")),
        }
    }
}

/// What the handshake declares about an SDK.
pub struct About {
    /// The name in reports (`rig-core`).
    pub name: &'static str,
    /// The pinned version.
    pub version: &'static str,
    pub homepage: &'static str,
    /// Where the documented caller policy's checks come from.
    pub policy_doc: &'static str,
    /// The dialects it is fed, as toolcert spells them.
    pub dialects: &'static [Endpoint],
}

/// One SDK behind the mock.
pub trait Sdk {
    fn about(&self) -> About;

    /// Consumes the stream just queued on `mock` for `dialect` as the SDK's caller does; the
    /// stream's result entry (docs/PROTOCOL.md). `Err` is an adapter problem (`errored`),
    /// never a finding about the SDK.
    fn run_stream(
        &mut self,
        mock: &Mock,
        dialect: Endpoint,
        stream: &Value,
        served: &Served,
    ) -> impl Future<Output = Result<Value, String>>;
}

/// The mock provider on 127.0.0.1 and the count of replies it has handed out.
pub struct Mock {
    provider: MockProvider,
    taken: u64,
}

/// One stream as the mock serves it.
pub struct Served {
    pub chunks: Vec<Vec<u8>>,
    pub end: End,
    /// The number of chunks: what outcomes at the end of the stream are stamped with.
    pub units: u32,
    endpoint: Endpoint,
    taken: u64,
}

impl Mock {
    pub fn start() -> Result<Mock, String> {
        // A fresh connection per request: how a burst of chunks is cut by the client's read
        // buffer never depends on earlier responses.
        let provider = MockProvider::start(Config::default().close_connections(true))
            .map_err(|e| format!("cannot start the mock: {e}"))?;
        Ok(Mock { provider, taken: 0 })
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base_url(&self) -> String {
        self.provider.base_url()
    }

    /// Queues `stream`'s chunks on `endpoint`, ending its body as the stream's `end` says.
    fn queue(&self, endpoint: Endpoint, stream: &Value) -> Result<Served, String> {
        let units = stream["units"].as_array().ok_or("a stream without units")?;
        let chunks = units.iter().map(chunk_bytes).collect::<Result<Vec<_>, _>>()?;
        let end = match stream["end"].as_str() {
            Some("eof") | None => End::Close,
            Some("disconnect") => End::Abort,
            Some("cancel") => End::Hold,
            Some(other) => return Err(format!("unknown stream end {other:?}")),
        };
        self.provider.enqueue_reply(endpoint, Reply { chunks: chunks.clone(), end });
        Ok(Served { units: chunks.len() as u32, chunks, end, endpoint, taken: self.taken })
    }

    /// Whether the mock has handed over every chunk of `served` (for a caller that cancels).
    pub fn drained(&self, served: &Served) -> bool {
        self.provider.queued(served.endpoint) == 0 && self.provider.served() > served.taken
    }

    /// Checks that the SDK made exactly one request, to the stream's endpoint, asking to
    /// stream; clears the mock for the next stream.
    fn settle(&mut self, served: &Served) -> Result<(), String> {
        let leftover = self.provider.queued(served.endpoint);
        self.provider.clear();
        let requests = self.provider.take_requests();
        // A reply left in the queue was never handed out, so it will never count as served.
        self.taken += u64::from(leftover == 0);
        match requests.as_slice() {
            [r] if r.endpoint == Some(served.endpoint) && r.asks_to_stream() && leftover == 0 => Ok(()),
            _ => {
                let seen: Vec<String> = requests
                    .iter()
                    .map(|r| format!("{} {} (stream: {})", r.method, r.path, r.asks_to_stream()))
                    .collect();
                Err(format!(
                    "the SDK did not make exactly one streaming request to {}: {seen:?}",
                    served.endpoint.path()
                ))
            }
        }
    }
}

/// The next item of `stream`, as its caller reads it. Without `cancel`, simply the next
/// item. With it (the stream never closes), `None` once the mock has handed over every
/// chunk and the SDK has been quiet for 2 x [`CANCEL_IDLE`]: the caller then drops it.
pub async fn next_item<S: Stream + Unpin>(
    stream: &mut S,
    cancel: bool,
    drained: impl Fn() -> bool,
) -> Option<S::Item> {
    if !cancel {
        return stream.next().await;
    }
    let mut quiet = 0;
    loop {
        match tokio::time::timeout(CANCEL_IDLE, stream.next()).await {
            Ok(next) => return next,
            Err(_) if drained() => {
                quiet += 1;
                if quiet >= 2 {
                    return None;
                }
            }
            Err(_) => {}
        }
    }
}

/// Speaks the protocol on stdin and stdout until `stop` or the end of stdin. `make` builds
/// the SDK's clients against the mock once it runs; `name` names the adapter in its errors.
pub fn serve<S: Sdk>(name: &str, policy: Policy, make: impl FnOnce(&Mock) -> Result<S, String>) -> ! {
    let fatal = |message: &str| -> ! {
        eprintln!("toolcert-{name}: {message}");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| fatal(&format!("cannot start a tokio runtime: {e}")));
    let mut mock = Mock::start().unwrap_or_else(|e| fatal(&e));
    // Clients are built inside the runtime: some SDKs' HTTP clients look for one.
    let mut sdk = runtime.block_on(async { make(&mock) }).unwrap_or_else(|e| fatal(&e));
    let mut dialect: Option<Endpoint> = None;
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
            Some("start") => start_reply(&sdk.about(), policy),
            Some("configure") => configure(&sdk.about(), &request, &mut dialect),
            Some("run") => {
                let seq = request["seq"].clone();
                // elapsed_ns: the SDK's accumulation, around the whole run (docs/PROTOCOL.md).
                let started = thread_cpu();
                let outcome = match dialect {
                    Some(d) => runtime.block_on(run(&mut sdk, &mut mock, d, &request["case"])),
                    None => Err("run before configure".into()),
                };
                let elapsed = thread_cpu().saturating_sub(started);
                match outcome {
                    Ok(results) => {
                        json!({"seq": seq, "results": results, "elapsed_ns": elapsed.as_nanos() as u64})
                    }
                    Err(message) => json!({"seq": seq, "errored": true, "context": {"message": message}}),
                }
            }
            Some("stop") => std::process::exit(0),
            other => fatal(&format!("unknown command {other:?}")),
        };
        let written = writeln!(stdout, "{reply}").and_then(|()| stdout.flush());
        if let Err(e) = written {
            fatal(&format!("cannot write a reply: {e}"));
        }
    }
    std::process::exit(0)
}

fn start_reply(about: &About, policy: Policy) -> Value {
    json!({"version": PROTOCOL_VERSION, "implementation": {
        "name": about.name,
        "language": "rust",
        "version": about.version,
        "homepage": about.homepage,
        // The SDK is fed an HTTP response body: only the bytes level exists.
        "levels": ["bytes"],
        "dialects": about.dialects.iter().map(|d| d.name()).collect::<Vec<_>>(),
        // Every server profile's wire behaviours (docs/SPEC.md, "Server profiles"): an SDK
        // reads whatever bytes come. Kept equal to toolcert's list by tests/profiles.rs.
        "quirks": ["chat_index_zero", "chat_repeat_fields", "chat_repeat_id", "chat_empty_continuations", "chat_no_index", "chat_whole_calls", "chat_sparse_index", "chat_split_entries", "chat_repeat_on_finish", "chat_content_filters", "chat_late_name", "responses_done_only", "responses_rotating_item_id", "responses_hosted_items", "anthropic_input_in_start", "anthropic_content_in_start", "gemini_partial_args", "hostile"],
        "policy": policy.name(),
        "policy_doc": about.policy_doc,
        // No adapter here validates arguments against tool schemas.
        "capabilities": [],
    }})
}

fn configure(about: &About, request: &Value, dialect: &mut Option<Endpoint>) -> Value {
    *dialect = None;
    if request["level"] != "bytes" {
        return json!({"ok": false, "reason": "the SDK is fed an HTTP response body: only the bytes level"});
    }
    match about.dialects.iter().find(|d| request["dialect"] == d.name()) {
        Some(&d) => {
            *dialect = Some(d);
            json!({"ok": true})
        }
        None => json!({"ok": false, "reason": format!("{} is not fed {}", about.name, request["dialect"])}),
    }
}

/// Runs every stream of a case through the SDK, one after another, in the order the harness
/// first delivers to them (each is its own request with its own SDK stream, so interleaving
/// them would only interleave requests); one result per stream, in the case's order.
async fn run<S: Sdk>(
    sdk: &mut S,
    mock: &mut Mock,
    dialect: Endpoint,
    case: &Value,
) -> Result<Vec<Value>, String> {
    let streams = case["streams"].as_array().ok_or("a case without streams")?;
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
        let served = mock.queue(dialect, &streams[s])?;
        let result =
            tokio::time::timeout(stream_timeout(), sdk.run_stream(mock, dialect, &streams[s], &served)).await;
        mock.settle(&served)?;
        results[s] = match result {
            Ok(result) => result?,
            Err(_) => json!({"outcomes": [], "text": "", "crash": format!(
                "the SDK did not finish the stream within {} s (its caller would hang)",
                stream_timeout().as_secs_f64()
            )}),
        };
    }
    Ok(results)
}

/// The calling thread's CPU time. The SDK runs on this thread (a current-thread runtime);
/// the mock provider serves on its own, so its work is not in the figure.
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer; a failure leaves
    // the zero written above.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec.max(0) as u64, ts.tv_nsec.clamp(0, 999_999_999) as u32)
}

/// A JSON-ish message, cut to a length a report can carry.
pub fn short(s: &str) -> String {
    const MAX: usize = 400;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

fn chunk_bytes(unit: &Value) -> Result<Vec<u8>, String> {
    if let Some(text) = unit.get("text").and_then(Value::as_str) {
        return Ok(text.as_bytes().to_vec());
    }
    if let Some(b64) = unit.get("bytes").and_then(Value::as_str) {
        return base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("bad base64 in a unit: {e}"));
    }
    Err(format!("not a bytes-level unit: {}", short(&unit.to_string())))
}

/// The request's tools as (name, JSON Schema); a tool without a schema gets an empty object
/// schema, as providers require one.
pub fn tools(stream: &Value) -> Vec<(String, Value)> {
    stream["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            let name = t["name"].as_str()?.to_string();
            let schema = t
                .get("schema")
                .filter(|s| !s.is_null())
                .cloned()
                .unwrap_or_else(|| json!({"type": "object"}));
            Some((name, schema))
        })
        .collect()
}
