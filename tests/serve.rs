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
