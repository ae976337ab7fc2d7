//! The HTTP side: accept loop, routing, and the body that sends one HTTP chunk per scripted
//! chunk.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::{End, Endpoint, Reply, Request, Shared};

/// Accepts connections until `shutdown` fires; each connection is served on its own task, so
/// a client that stalls or leaves mid-stream affects nobody else.
pub(crate) async fn run(listener: TcpListener, shared: Arc<Shared>, mut shutdown: oneshot::Receiver<()>) {
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        // Out of file descriptors and the like: back off rather than spin.
                        if shared.log {
                            eprintln!("toolcert-serve: accept failed: {e}");
                        }
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                // Each chunk should leave as soon as it is written, not wait for the next.
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                let keep_alive = shared.keep_alive;
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| handle(shared.clone(), req));
                    // A client that drops the connection mid-stream ends up here as an error
                    // of this connection only.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .keep_alive(keep_alive)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        }
    }
}

type ResponseBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

async fn handle(
    shared: Arc<Shared>,
    req: hyper::Request<Incoming>,
) -> Result<hyper::Response<ResponseBody>, Infallible> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let headers = req
        .headers()
        .iter()
        .map(|(n, v)| (n.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let (body, body_len) = read_body(req.into_body(), shared.max_body).await;
    let endpoint = Endpoint::from_path(&path);
    let too_large = body.is_none();
    let body = body.unwrap_or_default();
    let reply = match endpoint {
        Some(e) if method == Method::POST && !too_large => shared.next_reply(e, &body),
        _ => None,
    };
    shared.record(Request {
        endpoint,
        method: method.to_string(),
        path: path.clone(),
        headers,
        body,
        body_len,
    });
    let log = |status: StatusCode, what: &str| {
        if shared.log {
            eprintln!("toolcert-serve: {method} {path} -> {} {what}", status.as_u16());
        }
    };
    let response = match (endpoint, reply) {
        _ if too_large => {
            let message = format!(
                "toolcert mock: the request body ({body_len} bytes) is over the limit of {} bytes; \
                 it was discarded",
                shared.max_body
            );
            log(StatusCode::PAYLOAD_TOO_LARGE, &message);
            error(StatusCode::PAYLOAD_TOO_LARGE, "request_too_large", &message)
        }
        (None, _) => {
            let served: Vec<String> = Endpoint::ALL.iter().map(|e| format!("POST {}", e.path())).collect();
            let message =
                format!("no such endpoint: {method} {path}; this mock serves {}", served.join(", "));
            log(StatusCode::NOT_FOUND, &message);
            error(StatusCode::NOT_FOUND, "not_found_error", &message)
        }
        (Some(e), _) if method != Method::POST => {
            let message = format!("{} takes POST, not {method}", e.path());
            log(StatusCode::METHOD_NOT_ALLOWED, &message);
            error(StatusCode::METHOD_NOT_ALLOWED, "invalid_request_error", &message)
        }
        (Some(e), None) => {
            let message = format!(
                "toolcert mock: no reply queued for {e} (POST {}); enqueue one (MockProvider::enqueue) \
                 or give `toolcert serve` something to serve (--sse, --case, --cases)",
                e.path()
            );
            log(StatusCode::INTERNAL_SERVER_ERROR, &message);
            error(StatusCode::INTERNAL_SERVER_ERROR, "api_error", &message)
        }
        (Some(e), Some(reply)) => {
            let bytes: usize = reply.chunks.iter().map(Vec::len).sum();
            log(StatusCode::OK, &format!("{} chunks, {bytes} bytes, {:?}", reply.chunks.len(), reply.end));
            stream(shared.clone(), reply, e)
        }
    };
    Ok(response)
}

/// Reads a request body of at most `max` bytes: `(Some(body), len)`, or `(None, len)` when it
/// is longer, in which case it is read to its end all the same (so the client gets the 413
/// instead of a reset connection) but nothing past the limit is kept. A body cut by the client
/// is what arrived of it.
async fn read_body(mut body: Incoming, max: usize) -> (Option<Vec<u8>>, u64) {
    // Frames are kept as they arrive and joined once at the end: a buffer grown by doubling
    // would hold every smaller copy at some point, several times the body in all.
    let mut frames: Option<Vec<Bytes>> = match body.size_hint().exact() {
        // A declared length over the limit is discarded from the first byte.
        Some(n) if n > max as u64 => None,
        _ => Some(Vec::new()),
    };
    let mut len = 0u64;
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else { break };
        let Ok(data) = frame.into_data() else { continue };
        len += data.len() as u64;
        if len > max as u64 {
            frames = None;
        }
        if let Some(frames) = &mut frames {
            frames.push(data);
        }
    }
    (frames.map(|f| f.concat()), len)
}

/// An error body both SDK families read: Anthropic's `{"type": "error", "error": {...}}` and
/// OpenAI's `{"error": {"message": ...}}`.
fn error(status: StatusCode, kind: &str, message: &str) -> hyper::Response<ResponseBody> {
    let body = serde_json::json!({"type": "error", "error": {"type": kind, "message": message}});
    let full = Full::new(Bytes::from(body.to_string())).map_err(|never: Infallible| match never {});
    hyper::Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(full.boxed())
        .expect("a static response is valid")
}

fn stream(shared: Arc<Shared>, reply: Reply, endpoint: Endpoint) -> hyper::Response<ResponseBody> {
    let delay = shared.chunk_delay;
    let body = ChunkBody {
        chunks: reply.chunks.into_iter().filter(|c| !c.is_empty()).map(Bytes::from).collect(),
        end: reply.end,
        delay,
        sleep: None,
        sent_one: false,
        flushed: false,
        counted: false,
        shared,
    };
    // No content-length: hyper frames the body with chunked encoding, one HTTP chunk per
    // frame, which a frame-by-frame client reads back without merging neighbours.
    hyper::Response::builder()
        .status(StatusCode::OK)
        .header("content-type", endpoint.content_type())
        .header("cache-control", "no-cache")
        .body(body.boxed())
        .expect("a static response is valid")
}

/// How long an aborted reply waits after its last chunk before dropping the connection.
const ABORT_LINGER: Duration = Duration::from_millis(10);

/// The scripted chunks as body frames, one per chunk, `delay` apart.
struct ChunkBody {
    chunks: VecDeque<Bytes>,
    end: End,
    delay: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    sent_one: bool,
    /// Whether hyper has been given the chance to flush since the last chunk.
    flushed: bool,
    /// Whether this reply has been counted in `served`.
    counted: bool,
    shared: Arc<Shared>,
}

impl ChunkBody {
    fn count(&mut self) {
        if !self.counted {
            self.counted = true;
            self.shared.served.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Body for ChunkBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if !this.chunks.is_empty() {
            if this.sent_one && !this.flushed {
                // hyper flushes what it has buffered when the body is not ready: one write
                // per chunk, rather than many chunks coalesced into one write that a client
                // then reads back cut at its own buffer size.
                this.flushed = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            if this.sent_one && !this.delay.is_zero() {
                let sleep = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep(this.delay)));
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.sleep = None;
            }
            let chunk = this.chunks.pop_front().expect("checked non-empty");
            this.sent_one = true;
            this.flushed = false;
            if this.chunks.is_empty() {
                this.count();
            }
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        this.count();
        match this.end {
            End::Close => Poll::Ready(None),
            End::Abort => {
                // hyper drops the connection as soon as the body fails, with whatever it has
                // not flushed yet: give it time to flush the chunks first.
                let linger = this.sleep.get_or_insert_with(|| Box::pin(tokio::time::sleep(ABORT_LINGER)));
                if linger.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                Poll::Ready(Some(Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "toolcert mock: the reply ends with a dropped connection",
                ))))
            }
            // Never woken: the connection task ends when the client goes away or the server
            // stops, and drops this body then.
            End::Hold => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty() && self.end == End::Close
    }
}

impl Drop for ChunkBody {
    fn drop(&mut self) {
        // A client that left before the last chunk: this reply is over all the same.
        self.count();
    }
}
