//! The mock provider over real HTTP: a raw `TcpStream` client that reads the chunked body
//! frame by frame, so the tests see exactly the HTTP chunks the server wrote.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use toolcert_serve::{Config, End, Endpoint, MockProvider, Reply};

/// A response as read off the wire.
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The next HTTP chunk of a chunked body: `Ok(Some(bytes))`, `Ok(None)` at the terminating
    /// empty chunk, `Err` when the connection ends first.
    fn next_chunk(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "body cut short"));
        }
        let size = usize::from_str_radix(line.trim_end().split(';').next().unwrap(), 16)
            .unwrap_or_else(|_| panic!("not a chunk size line: {line:?}"));
        let mut data = vec![0; size + 2];
        self.reader.read_exact(&mut data)?;
        assert_eq!(&data[size..], b"\r\n", "a chunk ends with CRLF");
        data.truncate(size);
        if size == 0 {
            return Ok(None);
        }
        Ok(Some(data))
    }

    /// Every chunk up to the terminating one.
    fn chunks(&mut self) -> std::io::Result<Vec<Vec<u8>>> {
        let mut out = Vec::new();
        while let Some(c) = self.next_chunk()? {
            out.push(c);
        }
        Ok(out)
    }

    /// A body sent with content-length.
    fn body(&mut self) -> Vec<u8> {
        let len: usize = self.header("content-length").expect("a content-length").parse().unwrap();
        let mut body = vec![0; len];
        self.reader.read_exact(&mut body).unwrap();
        body
    }
}

fn send(addr: SocketAddr, method: &str, path: &str, body: &str) -> Response {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nx-api-key: sk-test\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (n, v) = line.split_once(':').unwrap();
        headers.push((n.trim().to_string(), v.trim().to_string()));
    }
    Response { status, headers, reader }
}

fn post(mock: &MockProvider, endpoint: Endpoint) -> Response {
    send(mock.addr(), "POST", endpoint.path(), r#"{"model": "m", "stream": true}"#)
}

fn start() -> MockProvider {
    MockProvider::start(Config::default()).unwrap()
}

/// Chunks that cut an SSE stream badly: inside `data:`, inside `é` (not UTF-8 alone), between
/// `\r` and `\n`.
fn awkward_chunks() -> Vec<Vec<u8>> {
    let stream = "event: x\r\ndata: {\"t\": \"caf\u{e9}\"}\r\n\r\nda".as_bytes().to_vec();
    let cut_e = stream.iter().position(|&b| b == 0xc3).unwrap() + 1;
    let cut_crlf = stream.iter().position(|&b| b == b'\r').unwrap() + 1;
    vec![
        stream[..3].to_vec(),
        stream[3..cut_crlf].to_vec(),
        stream[cut_crlf..cut_e].to_vec(),
        stream[cut_e..].to_vec(),
        b"ta: [DONE]\n\n".to_vec(),
    ]
}

#[test]
fn each_endpoint_serves_its_queued_chunks_exactly_one_http_chunk_each() {
    let mock = start();
    for endpoint in Endpoint::ALL {
        mock.enqueue(endpoint, awkward_chunks());
    }
    // Served in the reverse order of queueing: each endpoint has its own queue.
    for endpoint in Endpoint::ALL.into_iter().rev() {
        let mut r = post(&mock, endpoint);
        assert_eq!(r.status, 200, "{endpoint}");
        // Bedrock's body is binary event stream messages, the others' SSE.
        let content_type = if endpoint == Endpoint::Bedrock {
            "application/vnd.amazon.eventstream"
        } else {
            "text/event-stream"
        };
        assert_eq!(r.header("content-type"), Some(content_type));
        assert_eq!(r.header("transfer-encoding"), Some("chunked"));
        assert_eq!(r.chunks().unwrap(), awkward_chunks(), "{endpoint}");
    }
    assert_eq!(mock.served(), Endpoint::ALL.len() as u64);
    assert!(Endpoint::ALL.iter().all(|&e| mock.queued(e) == 0));
}

#[test]
fn queued_replies_are_served_in_order_and_empty_chunks_are_skipped() {
    let mock = start();
    mock.enqueue(Endpoint::OpenAiChat, vec![b"data: 1\n\n".to_vec(), Vec::new(), b"data: 2\n\n".to_vec()]);
    mock.enqueue(Endpoint::OpenAiChat, vec![b"data: 3\n\n".to_vec()]);
    assert_eq!(mock.queued(Endpoint::OpenAiChat), 2);
    let first = post(&mock, Endpoint::OpenAiChat).chunks().unwrap();
    assert_eq!(first, [b"data: 1\n\n".to_vec(), b"data: 2\n\n".to_vec()]);
    let second = post(&mock, Endpoint::OpenAiChat).chunks().unwrap();
    assert_eq!(second, [b"data: 3\n\n".to_vec()]);
}

#[test]
fn chunks_arrive_one_by_one_with_the_delay_between_them() {
    let delay = Duration::from_millis(250);
    let mock = MockProvider::start(Config::default().chunk_delay(delay)).unwrap();
    mock.enqueue(Endpoint::Anthropic, vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
    let mut r = post(&mock, Endpoint::Anthropic);
    let mut arrivals = Vec::new();
    while let Some(c) = r.next_chunk().unwrap() {
        arrivals.push((c, Instant::now()));
    }
    let got: Vec<&[u8]> = arrivals.iter().map(|(c, _)| c.as_slice()).collect();
    assert_eq!(got, [b"a", b"b", b"c"]);
    // The first chunk is there long before the last is sent: the body is not buffered.
    let spread = arrivals[2].1 - arrivals[0].1;
    assert!(spread >= delay * 2 - Duration::from_millis(50), "{spread:?}");
}

#[test]
fn a_client_that_leaves_mid_stream_does_not_stop_the_server() {
    let mock = MockProvider::start(Config::default().chunk_delay(Duration::from_millis(20))).unwrap();
    let many: Vec<Vec<u8>> = (0..50).map(|i| format!("data: {i}\n\n").into_bytes()).collect();
    mock.enqueue(Endpoint::OpenAiChat, many);
    {
        let mut r = post(&mock, Endpoint::OpenAiChat);
        assert_eq!(r.next_chunk().unwrap(), Some(b"data: 0\n\n".to_vec()));
        // Dropped here, 49 chunks early.
    }
    // A held reply, left after its only chunk.
    mock.enqueue_reply(
        Endpoint::OpenAiChat,
        Reply::sse(vec![b"data: held\n\n".to_vec()]).with_end(End::Hold),
    );
    {
        let mut r = post(&mock, Endpoint::OpenAiChat);
        assert_eq!(r.next_chunk().unwrap(), Some(b"data: held\n\n".to_vec()));
    }
    mock.enqueue(Endpoint::OpenAiChat, vec![b"data: next\n\n".to_vec()]);
    let mut r = post(&mock, Endpoint::OpenAiChat);
    assert_eq!(r.status, 200);
    assert_eq!(r.chunks().unwrap(), [b"data: next\n\n".to_vec()]);
    // The abandoned reply is counted as over once the server notices the client left.
    let deadline = Instant::now() + Duration::from_secs(5);
    while mock.served() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(mock.served(), 3);
}

#[test]
fn an_aborted_reply_drops_the_connection_without_the_last_chunk() {
    let mock = start();
    mock.enqueue_reply(Endpoint::Anthropic, Reply::sse(vec![b"event: a\n".to_vec()]).with_end(End::Abort));
    let mut r = post(&mock, Endpoint::Anthropic);
    assert_eq!(r.next_chunk().unwrap(), Some(b"event: a\n".to_vec()));
    let end = r.next_chunk();
    assert!(end.is_err(), "the body should be cut short, got {end:?}");
}

#[test]
fn a_held_reply_stays_open_after_its_last_chunk() {
    let mock = start();
    mock.enqueue_reply(
        Endpoint::OpenAiResponses,
        Reply::sse(vec![b"data: x\n\n".to_vec()]).with_end(End::Hold),
    );
    let mut r = post(&mock, Endpoint::OpenAiResponses);
    assert_eq!(r.next_chunk().unwrap(), Some(b"data: x\n\n".to_vec()));
    assert_eq!(mock.served(), 1, "counted once the last chunk is handed over");
    r.reader.get_ref().set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let err = r.next_chunk().unwrap_err();
    assert!(matches!(err.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut), "{err}");
}

#[test]
fn a_request_with_nothing_queued_gets_a_json_error_naming_the_problem() {
    let mock = start();
    let mut r = post(&mock, Endpoint::Anthropic);
    assert_eq!(r.status, 500);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let body: serde_json::Value = serde_json::from_slice(&r.body()).unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("no reply queued for anthropic"), "{message}");
    assert_eq!(body["type"], "error");

    let mut r = send(mock.addr(), "POST", "/v1/complete", "{}");
    assert_eq!(r.status, 404);
    let body: serde_json::Value = serde_json::from_slice(&r.body()).unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("/v1/complete") && message.contains("POST /v1/chat/completions"), "{message}");

    let r = send(mock.addr(), "GET", "/v1/messages", "");
    assert_eq!(r.status, 405);
}

#[test]
fn a_body_over_the_limit_gets_a_413_and_is_not_kept_and_only_recent_requests_are() {
    let mock = MockProvider::start(Config::default().max_body(10).keep_requests(2)).unwrap();
    mock.enqueue(Endpoint::Anthropic, vec![b"data: x\n\n".to_vec()]);
    let big = "{\"stream\": true, \"pad\": 1}";
    let mut r = send(mock.addr(), "POST", "/v1/messages", big);
    assert_eq!(r.status, 413);
    let body = String::from_utf8(r.body()).unwrap();
    assert!(body.contains("over the limit of 10 bytes"), "{body}");
    assert_eq!(mock.queued(Endpoint::Anthropic), 1, "a refused request takes no reply");
    let seen = mock.requests();
    assert_eq!((seen[0].body.len(), seen[0].body_len), (0, big.len() as u64), "recorded, its body not kept");
    // Within the limit it is served; of three requests the last two are remembered.
    send(mock.addr(), "POST", "/v1/messages", "{}").chunks().unwrap();
    send(mock.addr(), "POST", "/v1/nothing", "{}");
    let seen = mock.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!((seen[0].body.as_slice(), seen[1].path.as_str()), (&b"{}"[..], "/v1/nothing"));
}

#[test]
fn requests_are_recorded_with_their_bodies() {
    let mock = start();
    mock.enqueue(Endpoint::OpenAiResponses, vec![b"data: x\n\n".to_vec()]);
    post(&mock, Endpoint::OpenAiResponses).chunks().unwrap();
    send(mock.addr(), "POST", "/v1/chat/completions/", r#"{"stream": false}"#);
    let seen = mock.take_requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].endpoint, Some(Endpoint::OpenAiResponses));
    assert_eq!(seen[0].method, "POST");
    assert!(seen[0].asks_to_stream());
    assert_eq!(seen[0].header("x-api-key"), Some("sk-test"));
    assert_eq!(seen[0].json().unwrap()["model"], "m");
    assert_eq!(seen[1].endpoint, Some(Endpoint::OpenAiChat), "a trailing slash is tolerated");
    assert!(!seen[1].asks_to_stream());
    assert!(mock.requests().is_empty());
}

#[test]
fn the_fallback_answers_when_the_queue_is_empty() {
    let mock = MockProvider::start(Config::default().fallback(|endpoint, body| {
        let asked: serde_json::Value = serde_json::from_slice(body).ok()?;
        let line = format!("data: {endpoint} {}\n\n", asked["model"]);
        Some(Reply::sse(vec![line.into_bytes()]))
    }))
    .unwrap();
    mock.enqueue(Endpoint::OpenAiChat, vec![b"data: queued\n\n".to_vec()]);
    assert_eq!(post(&mock, Endpoint::OpenAiChat).chunks().unwrap(), [b"data: queued\n\n".to_vec()]);
    assert_eq!(
        post(&mock, Endpoint::OpenAiChat).chunks().unwrap(),
        [b"data: openai-chat \"m\"\n\n".to_vec()]
    );
    assert_eq!(post(&mock, Endpoint::Anthropic).chunks().unwrap(), [b"data: anthropic \"m\"\n\n".to_vec()]);
    // A fallback that declines gives the usual error.
    let r = send(mock.addr(), "POST", "/v1/messages", "not json");
    assert_eq!(r.status, 500);
}

#[test]
fn it_listens_on_loopback_only_and_stops_when_dropped() {
    let mock = start();
    let addr = mock.addr();
    assert!(addr.ip().is_loopback());
    assert_eq!(mock.base_url(), format!("http://127.0.0.1:{}", addr.port()));
    assert_eq!(
        mock.url(Endpoint::OpenAiChat),
        format!("http://127.0.0.1:{}/v1/chat/completions", addr.port())
    );
    drop(mock);
    assert!(TcpStream::connect(addr).is_err(), "nothing listens after drop");
}

#[test]
fn endpoint_names_match_toolcert_dialects() {
    for e in Endpoint::ALL {
        assert_eq!(e.name().parse::<Endpoint>().unwrap(), e);
        assert_eq!(Endpoint::from_path(e.path()), Some(e));
    }
    assert!("openai".parse::<Endpoint>().is_err());
}
