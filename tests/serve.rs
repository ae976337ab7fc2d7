//! `toolcert serve` as a person uses it: started on a free port, it prints its address, serves
//! a named case's exact corpus bytes over HTTP, and says clearly when it has nothing to serve.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The server process, killed when the test ends however it ends.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(args: &[&str]) -> (Served, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolcert"))
        .arg("serve")
        .args(["--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("toolcert starts");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    // Keep reading what it prints, as a terminal would.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let served = Served(child);
    let base = first
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no address in {first:?}"))
        .to_string();
    (served, base)
}

/// POSTs to `path` and returns the status and the body (chunked bodies decoded).
fn post(base: &str, path: &str) -> (u16, Vec<u8>) {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let body = r#"{"model": "claude-sonnet-4-5", "stream": true, "messages": []}"#;
    write!(
        s,
        "POST {path} HTTP/1.1\r\nhost: {addr}\r\nx-api-key: any\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status = line.split(' ').nth(1).unwrap().parse().unwrap();
    let (mut chunked, mut length) = (false, 0);
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let l = line.trim_end().to_ascii_lowercase();
        if l.is_empty() {
            break;
        }
        chunked |= l == "transfer-encoding: chunked";
        if let Some(n) = l.strip_prefix("content-length: ") {
            length = n.parse().unwrap();
        }
    }
    let mut out = Vec::new();
    if !chunked {
        out.resize(length, 0);
        r.read_exact(&mut out).unwrap();
        return (status, out);
    }
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        let size = usize::from_str_radix(line.trim_end(), 16).unwrap();
        let mut data = vec![0; size + 2];
        r.read_exact(&mut data).unwrap();
        if size == 0 {
            return (status, out);
        }
        out.extend_from_slice(&data[..size]);
    }
}

#[test]
fn serve_streams_a_named_case_as_its_corpus_file() {
    let (_server, base) = serve(&["--case", "anthropic/deltas/lookup-order-a4471"]);
    let corpus = std::fs::read("corpus/anthropic/deltas/lookup-order-a4471.sse").unwrap();
    let (status, body) = post(&base, "/v1/messages");
    assert_eq!(status, 200);
    assert_eq!(String::from_utf8_lossy(&body), String::from_utf8_lossy(&corpus));
    // The list starts over: the same case again.
    assert_eq!(post(&base, "/v1/messages").1, corpus);
    // Nothing matches for the other dialects: a clear error.
    let (status, body) = post(&base, "/v1/chat/completions");
    assert_eq!(status, 500);
    let error: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert!(
        error["error"]["message"].as_str().unwrap().contains("no reply queued for openai-chat"),
        "{error}"
    );
}

#[test]
fn serve_streams_a_recorded_file_on_the_endpoint_of_its_dialect() {
    let file = "corpus/openai-chat/deltas/lookup-order-a4471.sse";
    let (_server, base) = serve(&["--sse", file, "--chunk", "7", "--chunk-delay-ms", "1"]);
    let (status, body) = post(&base, "/v1/chat/completions");
    assert_eq!(status, 200);
    assert_eq!(body, std::fs::read(file).unwrap());
    assert_eq!(post(&base, "/v1/messages").0, 500);
}

#[test]
fn serve_refuses_to_start_with_nothing_to_serve() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolcert"))
        .args(["serve", "--port", "0", "--case", "no-such-case-anywhere"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to serve"));
}

/// Sends a POST whose body is `len` bytes of `x`, chunked (`content-length` unknown to the
/// server until the end) or with its length, from a 1 MiB buffer written again and again;
/// the status line's code, or `None` when the connection broke first.
fn post_large(base: &str, len: usize, chunked: bool) -> Option<u16> {
    let addr = base.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let framing =
        if chunked { "transfer-encoding: chunked".to_string() } else { format!("content-length: {len}") };
    write!(s, "POST /v1/messages HTTP/1.1\r\nhost: {addr}\r\n{framing}\r\n\r\n").ok()?;
    let block = vec![b'x'; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(block.len());
        if chunked {
            write!(s, "{n:x}\r\n").ok()?;
        }
        s.write_all(&block[..n]).ok()?;
        if chunked {
            s.write_all(b"\r\n").ok()?;
        }
        left -= n;
    }
    if chunked {
        s.write_all(b"0\r\n\r\n").ok()?;
    }
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).ok()?;
    line.split(' ').nth(1)?.parse().ok()
}

/// The peak resident set of a process, from /proc (Linux).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/PID/status");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
#[cfg(target_os = "linux")]
fn serve_stays_small_under_eleven_50_mb_bodies_and_still_answers() {
    let (served, base) = serve(&["--case", "lookup-order"]);
    const MB: usize = 1_000_000;
    for k in 0..11 {
        // Alternate the framings: a known length over the limit, and a stream of chunks.
        let status = post_large(&base, 50 * MB, k % 2 == 1);
        assert_eq!(status, Some(413), "body {k}: the over-limit body is refused with a 413");
    }
    let peak = peak_rss_kib(served.0.id());
    eprintln!("toolcert serve: peak RSS {peak} KiB after eleven 50 MB bodies");
    // Before the limit, eleven bodies took it from 14 MB to 590 MB. Generous: CI noise and
    // allocator slack cannot reach 100 MB, one kept body (50 MB) plus buffers would.
    assert!(peak < 100 * 1000, "peak RSS {peak} KiB after eleven 50 MB bodies");
    let (status, body) = post(&base, "/v1/messages");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    assert!(String::from_utf8_lossy(&body).contains("message_stop"), "still serves");
}

#[test]
fn serve_refuses_a_body_over_max_body_with_a_413_naming_the_limit() {
    let (_served, base) = serve(&["--case", "lookup-order", "--max-body", "1000"]);
    assert_eq!(post_large(&base, 1001, false), Some(413));
    assert_eq!(post_large(&base, 5000, true), Some(413));
    // A body under the limit is served as before.
    let (status, _) = post(&base, "/v1/messages");
    assert_eq!(status, 200);
}
