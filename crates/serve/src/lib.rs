//! A local mock LLM provider for certifying real SDKs that only take a base URL.
//!
//! Most SDKs can be handed a transport (an `httpx` MockTransport, a `fetch`), which feeds them
//! exact bytes. Some (Rust crates, agent frameworks) only take a base URL: for those, this
//! crate runs an HTTP server on `127.0.0.1` that answers the three streaming endpoints
//! toolcert speaks with scripted bytes:
//!
//! | endpoint | dialect | SDK base URL convention |
//! |---|---|---|
//! | `POST /v1/messages` | `anthropic` | [`MockProvider::base_url`] (no `/v1`) |
//! | `POST /v1/chat/completions` | `openai-chat` | [`MockProvider::base_url`] + `/v1` |
//! | `POST /v1/responses` | `openai-responses` | [`MockProvider::base_url`] + `/v1` |
//! | `POST /model/{modelId}/converse-stream` | `bedrock` | [`MockProvider::base_url`] (the AWS SDKs' endpoint URL) |
//! | `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` | `gemini` | [`MockProvider::base_url`] (the Google Gen AI SDKs' base URL) |
//!
//! Each request to an endpoint takes the next [`Reply`] queued for it ([`MockProvider::enqueue`]),
//! else asks the [`Config::fallback`], else gets a 500 with a JSON error body naming the
//! problem. A reply is sent as `text/event-stream` (Bedrock's as
//! `application/vnd.amazon.eventstream`) with HTTP/1.1 chunked encoding, **one HTTP
//! chunk per scripted chunk, each written on its own**, optionally [`Config::chunk_delay`]
//! apart, and ends as its [`End`] says: closed normally, aborted (the connection drops), or held
//! open until the client goes away (the client cancels).
//!
//! What this cannot promise: the transport chunks a client reads. A client that decodes
//! chunked encoding frame by frame (hyper, hence reqwest) never sees two chunks merged, but
//! TCP may deliver one chunk in several reads; a client that reads the socket in bulk may merge
//! neighbours. The delay makes merging unlikely, not impossible. A merge can only hide a
//! chunk-boundary bug; a chunk split over several reads can show one the harness did not aim
//! for. Writing each chunk on its own and [`Config::close_connections`] make both rarer.
//!
//! Auth is not checked. Recent requests are recorded ([`MockProvider::requests`], the last
//! [`Config::keep_requests`]), so an adapter can check the client really asked to stream. A
//! request body over [`Config::max_body`] is read to its end and discarded, never kept, and
//! answered `413 Payload Too Large` with a JSON error: memory stays bounded whatever clients
//! send.
//!
//! ```no_run
//! use toolcert_serve::{Config, Endpoint, MockProvider};
//!
//! let mock = MockProvider::start(Config::default()).unwrap();
//! mock.enqueue(Endpoint::OpenAiChat, vec![b"data: [DONE]\n\n".to_vec()]);
//! // Point the client at `format!("{}/v1", mock.base_url())`, run it, then:
//! assert!(mock.requests()[0].asks_to_stream());
//! ```

use std::collections::VecDeque;
use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod server;

/// One of the streaming endpoints the mock serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// Anthropic Messages: `POST /v1/messages`.
    Anthropic,
    /// OpenAI Chat Completions: `POST /v1/chat/completions`.
    OpenAiChat,
    /// OpenAI Responses: `POST /v1/responses`.
    OpenAiResponses,
    /// AWS Bedrock ConverseStream: `POST /model/{modelId}/converse-stream`, any model id.
    Bedrock,
    /// Google Gemini: `POST /v1beta/models/{model}:streamGenerateContent` (`?alt=sse`), any
    /// model.
    Gemini,
}

impl Endpoint {
    pub const ALL: [Endpoint; 5] = [
        Endpoint::Anthropic,
        Endpoint::OpenAiChat,
        Endpoint::OpenAiResponses,
        Endpoint::Bedrock,
        Endpoint::Gemini,
    ];

    /// The request path.
    pub fn path(self) -> &'static str {
        match self {
            Endpoint::Anthropic => "/v1/messages",
            Endpoint::OpenAiChat => "/v1/chat/completions",
            Endpoint::OpenAiResponses => "/v1/responses",
            // The path of one model; any model id is served (`from_path`).
            Endpoint::Bedrock => "/model/toolcert.mock-v1%3A0/converse-stream",
            Endpoint::Gemini => "/v1beta/models/toolcert-mock:streamGenerateContent",
        }
    }

    /// The name of its dialect, as toolcert spells it (`anthropic`, `openai-chat`,
    /// `openai-responses`, `bedrock`, `gemini`).
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Anthropic => "anthropic",
            Endpoint::OpenAiChat => "openai-chat",
            Endpoint::OpenAiResponses => "openai-responses",
            Endpoint::Bedrock => "bedrock",
            Endpoint::Gemini => "gemini",
        }
    }

    /// The `content-type` of its streamed replies.
    pub fn content_type(self) -> &'static str {
        match self {
            Endpoint::Bedrock => "application/vnd.amazon.eventstream",
            _ => "text/event-stream",
        }
    }

    /// The endpoint served at `path` (a trailing `/` is tolerated: some clients join base URLs
    /// that way).
    pub fn from_path(path: &str) -> Option<Endpoint> {
        let path = path.strip_suffix('/').unwrap_or(path);
        let model = path.strip_prefix("/model/").and_then(|p| p.strip_suffix("/converse-stream"));
        if model.is_some_and(|m| !m.is_empty() && !m.contains('/')) {
            return Some(Endpoint::Bedrock);
        }
        let model =
            path.strip_prefix("/v1beta/models/").and_then(|p| p.strip_suffix(":streamGenerateContent"));
        if model.is_some_and(|m| !m.is_empty() && !m.contains('/')) {
            return Some(Endpoint::Gemini);
        }
        Endpoint::ALL.into_iter().find(|e| e.path() == path)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Endpoint {
    type Err = String;

    fn from_str(s: &str) -> Result<Endpoint, String> {
        Endpoint::ALL.into_iter().find(|e| e.name() == s).ok_or_else(|| {
            let names = Endpoint::ALL.map(Endpoint::name);
            let (last, rest) = names.split_last().expect("endpoints");
            format!("unknown endpoint {s:?}: expected {} or {last}", rest.join(", "))
        })
    }
}

/// How a reply's body ends once its chunks are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum End {
    /// The server closes the stream normally (the terminating empty chunk): `eof`.
    #[default]
    Close,
    /// The connection drops without the terminating chunk, so the client sees a body cut
    /// short: `disconnect`.
    Abort,
    /// The stream stays open until the client goes away, for a client that cancels: `cancel`.
    /// [`MockProvider::served`] counts the reply once its last chunk is handed over.
    Hold,
}

/// What one request gets: SSE bytes in transport chunks, and how the body ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// Sent in order, each as its own HTTP chunk. Empty chunks are skipped (an empty HTTP
    /// chunk would end the body).
    pub chunks: Vec<Vec<u8>>,
    pub end: End,
}

impl Reply {
    /// A reply that sends `chunks` and closes normally.
    pub fn sse(chunks: Vec<Vec<u8>>) -> Reply {
        Reply { chunks, end: End::Close }
    }

    /// The same chunks, ending as `end` says.
    pub fn with_end(mut self, end: End) -> Reply {
        self.end = end;
        self
    }
}

/// Called for a request to `endpoint` (with its body) when nothing is queued for it; `None`
/// gives the client the "nothing queued" error.
pub type Fallback = Arc<dyn Fn(Endpoint, &[u8]) -> Option<Reply> + Send + Sync>;

/// How the mock runs.
#[derive(Clone)]
pub struct Config {
    /// The port on 127.0.0.1; 0 picks a free one.
    pub port: u16,
    /// A pause between two chunks of a reply (not before the first), so a client that reads
    /// the socket in bulk is less likely to see chunks merged. Zero by default.
    pub chunk_delay: Duration,
    /// What a request gets when nothing is queued for its endpoint.
    pub fallback: Option<Fallback>,
    /// One line per request on stderr: method, path, status and what was sent.
    pub log: bool,
    /// Close every connection after its response (`connection: close`), so each request
    /// starts on a fresh connection whatever came before: a client's read buffer, which
    /// decides where a burst of chunks is cut, then never depends on earlier responses.
    pub close_connections: bool,
    /// The largest request body accepted, in bytes (16 MiB by default); a longer one gets a
    /// 413 and is discarded as it is read.
    pub max_body: usize,
    /// How many of the latest requests [`MockProvider::requests`] keeps (1,000 by default);
    /// older ones are forgotten.
    pub keep_requests: usize,
}

/// [`Config::max_body`]'s default: well above what a chat request with tools takes.
pub const DEFAULT_MAX_BODY: usize = 16 << 20;

/// [`Config::keep_requests`]'s default.
pub const DEFAULT_KEEP_REQUESTS: usize = 1000;

impl Default for Config {
    fn default() -> Config {
        Config {
            port: 0,
            chunk_delay: Duration::ZERO,
            fallback: None,
            log: false,
            close_connections: false,
            max_body: DEFAULT_MAX_BODY,
            keep_requests: DEFAULT_KEEP_REQUESTS,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("port", &self.port)
            .field("chunk_delay", &self.chunk_delay)
            .field("fallback", &self.fallback.as_ref().map(|_| "Fn"))
            .field("log", &self.log)
            .field("close_connections", &self.close_connections)
            .field("max_body", &self.max_body)
            .field("keep_requests", &self.keep_requests)
            .finish()
    }
}

impl Config {
    pub fn port(mut self, port: u16) -> Config {
        self.port = port;
        self
    }

    pub fn chunk_delay(mut self, delay: Duration) -> Config {
        self.chunk_delay = delay;
        self
    }

    pub fn fallback(
        mut self,
        f: impl Fn(Endpoint, &[u8]) -> Option<Reply> + Send + Sync + 'static,
    ) -> Config {
        self.fallback = Some(Arc::new(f));
        self
    }

    pub fn log(mut self, log: bool) -> Config {
        self.log = log;
        self
    }

    pub fn close_connections(mut self, close: bool) -> Config {
        self.close_connections = close;
        self
    }

    pub fn max_body(mut self, bytes: usize) -> Config {
        self.max_body = bytes;
        self
    }

    pub fn keep_requests(mut self, n: usize) -> Config {
        self.keep_requests = n;
        self
    }
}

/// A request the mock received, whatever its path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The endpoint its path names, if any.
    pub endpoint: Option<Endpoint>,
    pub method: String,
    pub path: String,
    /// Header names lowercased, in the order received.
    pub headers: Vec<(String, String)>,
    /// Empty when the body was over [`Config::max_body`] (see `body_len`).
    pub body: Vec<u8>,
    /// The body's length as received, kept or not.
    pub body_len: u64,
}

impl Request {
    /// The body as JSON, when it is.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// Whether the body asks for a stream (`"stream": true`, as every provider spells it).
    pub fn asks_to_stream(&self) -> bool {
        self.json().is_some_and(|v| v.get("stream") == Some(&serde_json::Value::Bool(true)))
    }

    /// The first header named `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// State shared between the handle and the server's connection tasks.
struct Shared {
    queues: Mutex<[VecDeque<Reply>; Endpoint::ALL.len()]>,
    requests: Mutex<VecDeque<Request>>,
    served: AtomicU64,
    max_body: usize,
    keep_requests: usize,
    fallback: Option<Fallback>,
    chunk_delay: Duration,
    log: bool,
    keep_alive: bool,
}

impl Shared {
    fn slot(endpoint: Endpoint) -> usize {
        Endpoint::ALL.iter().position(|&e| e == endpoint).expect("every endpoint is in ALL")
    }

    /// Records a request, forgetting the oldest beyond `keep_requests`.
    fn record(&self, request: Request) {
        let mut requests = lock(&self.requests);
        if self.keep_requests == 0 {
            return;
        }
        while requests.len() >= self.keep_requests {
            requests.pop_front();
        }
        requests.push_back(request);
    }

    /// The reply for the next request to `endpoint`: the queue first, then the fallback.
    fn next_reply(&self, endpoint: Endpoint, body: &[u8]) -> Option<Reply> {
        let queued = lock(&self.queues)[Shared::slot(endpoint)].pop_front();
        queued.or_else(|| self.fallback.as_ref().and_then(|f| f(endpoint, body)))
    }
}

/// A poisoned lock only means a panic elsewhere (in a test's closure); the data is still
/// consistent, since every critical section is a single push or pop.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running mock provider. It serves on its own thread (with its own tokio runtime), so it
/// works from synchronous code and from inside another runtime alike; dropping it stops the
/// server and closes every connection.
pub struct MockProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockProvider {
    /// Binds 127.0.0.1 (never another interface) and starts serving.
    pub fn start(config: Config) -> std::io::Result<MockProvider> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", config.port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            queues: Mutex::new(Default::default()),
            requests: Mutex::new(VecDeque::new()),
            served: AtomicU64::new(0),
            max_body: config.max_body,
            keep_requests: config.keep_requests,
            fallback: config.fallback,
            chunk_delay: config.chunk_delay,
            log: config.log,
            keep_alive: !config.close_connections,
        });
        let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        let state = shared.clone();
        let thread =
            std::thread::Builder::new().name(format!("toolcert-serve:{}", addr.port())).spawn(move || {
                runtime.block_on(async move {
                    match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => server::run(listener, state, rx).await,
                        Err(e) => eprintln!("toolcert-serve: cannot listen on {addr}: {e}"),
                    }
                });
                // Dropping the runtime here cancels every connection task still running
                // (replies held open included).
            })?;
        Ok(MockProvider { addr, shared, shutdown: Some(tx), thread: Some(thread) })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without `/v1`: the base URL Anthropic SDKs take. OpenAI SDKs
    /// take it with `/v1` appended.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The full URL of an endpoint.
    pub fn url(&self, endpoint: Endpoint) -> String {
        format!("{}{}", self.base_url(), endpoint.path())
    }

    /// The next request to `endpoint` gets exactly these chunks, then the stream closes.
    pub fn enqueue(&self, endpoint: Endpoint, chunks: Vec<Vec<u8>>) {
        self.enqueue_reply(endpoint, Reply::sse(chunks));
    }

    /// The next request to `endpoint` not already given a reply gets this one.
    pub fn enqueue_reply(&self, endpoint: Endpoint, reply: Reply) {
        lock(&self.shared.queues)[Shared::slot(endpoint)].push_back(reply);
    }

    /// Replies queued for `endpoint` and not yet taken.
    pub fn queued(&self, endpoint: Endpoint) -> usize {
        lock(&self.shared.queues)[Shared::slot(endpoint)].len()
    }

    /// Drops every queued reply.
    pub fn clear(&self) {
        for q in lock(&self.shared.queues).iter_mut() {
            q.clear();
        }
    }

    /// The requests received so far (the last [`Config::keep_requests`]), in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.shared.requests).iter().cloned().collect()
    }

    /// The requests received so far (as [`MockProvider::requests`]), forgetting them.
    pub fn take_requests(&self) -> Vec<Request> {
        std::mem::take(&mut *lock(&self.shared.requests)).into()
    }

    /// Replies whose sending is over: every chunk handed to the connection, or the client
    /// gone first. A held reply ([`End::Hold`]) counts once its last chunk is handed over.
    pub fn served(&self) -> u64 {
        self.shared.served.load(Ordering::SeqCst)
    }

    /// Blocks the calling thread while the server runs (until the process ends).
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl fmt::Debug for MockProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MockProvider").field("addr", &self.addr).finish_non_exhaustive()
    }
}
