//! Gemini's accumulation model: arguments built from typed values at JSON paths.
//!
//! Where it sits: shared by the Gemini renderer (which lowers a call's document to the
//! pieces Vertex's `streamFunctionCallArguments` sends) and the Gemini decoder (which turns
//! those pieces back into argument text for the neutral core). [`Writer`] is the one
//! definition of the text a sequence of pieces stands for: a string piece's content is copied
//! as written (its escapes kept, so a surrogate pair split across two pieces joins again), a
//! number as written, objects and arrays opened and closed by path. The renderer's canonical
//! document is what [`Writer`] writes for the document's leaves, so decoding a rendered stream
//! gives back the scenario's own bytes (docs/SPEC.md, "Gemini: arguments by JSON path").

use std::fmt::Write as _;

/// One step of a JSON path: a member name or an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// A path's steps from `$` (RFC 9535: `.name`, `['name']`, `["name"]`, `[3]`). `Err` names
/// what is wrong; a path has at most `MAX_DEPTH` steps.
pub(crate) fn parse_path(path: &str) -> Result<Vec<Seg>, String> {
    let bad = |why: &str| format!("jsonPath `{path}`: {why}");
    let rest = path.strip_prefix('$').ok_or_else(|| bad("does not start with `$`"))?;
    let b = rest.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if out.len() >= MAX_DEPTH {
            return Err(bad("is too deep"));
        }
        match b[i] {
            b'.' => {
                let start = i + 1;
                let mut end = start;
                while end < b.len() && b[end] != b'.' && b[end] != b'[' {
                    end += 1;
                }
                if end == start {
                    return Err(bad("has an empty member name"));
                }
                out.push(Seg::Key(rest[start..end].to_owned()));
                i = end;
            }
            b'[' => {
                let (seg, next) = bracket(rest, i + 1).ok_or_else(|| bad("has a malformed `[...]` step"))?;
                out.push(seg);
                i = next;
            }
            _ => return Err(bad("has a step that is neither `.name` nor `[...]`")),
        }
    }
    Ok(out)
}

/// The most steps a path (and a document the renderer lowers) has: deeper input is refused,
/// never recursed into.
pub(crate) const MAX_DEPTH: usize = 256;

/// A bracketed step starting after its `[`: a quoted name or an index, and where it ends.
fn bracket(s: &str, at: usize) -> Option<(Seg, usize)> {
    let b = s.as_bytes();
    match *b.get(at)? {
        q @ (b'\'' | b'"') => {
            let mut name = String::new();
            let mut chars = s[at + 1..].char_indices();
            while let Some((k, c)) = chars.next() {
                match c {
                    c if c as u32 == q as u32 => {
                        let close = at + 1 + k + 1;
                        return (b.get(close) == Some(&b']')).then(|| (Seg::Key(name), close + 1));
                    }
                    '\\' => {
                        let (_, e) = chars.next()?;
                        name.push(match e {
                            'b' => '\u{8}',
                            'f' => '\u{c}',
                            'n' => '\n',
                            'r' => '\r',
                            't' => '\t',
                            '/' | '\\' | '\'' | '"' => e,
                            'u' => {
                                let hex: String =
                                    (0..4).filter_map(|_| chars.next().map(|(_, h)| h)).collect();
                                char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
                            }
                            _ => return None,
                        });
                    }
                    c => name.push(c),
                }
            }
            None
        }
        _ => {
            let end = at + s[at..].find(']')?;
            let digits = &s[at..end];
            if digits.is_empty() || !digits.bytes().all(|d| d.is_ascii_digit()) || digits.len() > 9 {
                return None;
            }
            Some((Seg::Index(digits.parse().ok()?), end + 1))
        }
    }
}

/// A path as the renderer writes it: `.name` for a plain name, `['...']` for any other.
pub(crate) fn write_path(path: &[Seg]) -> String {
    let mut out = String::from("$");
    for seg in path {
        match seg {
            Seg::Index(n) => {
                let _ = write!(out, "[{n}]");
            }
            Seg::Key(k) if plain_name(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Key(k) => {
                out.push_str("['");
                for c in k.chars() {
                    match c {
                        '\'' => out.push_str("\\'"),
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        c if (c as u32) < 0x20 => {
                            let _ = write!(out, "\\u{:04x}", c as u32);
                        }
                        c => out.push(c),
                    }
                }
                out.push_str("']");
            }
        }
    }
    out
}

/// RFC 9535's member-name shorthand (ASCII): a letter or `_`, then letters, digits or `_`.
fn plain_name(k: &str) -> bool {
    let mut b = k.bytes();
    b.next().is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// A typed value at a path, as one `partialArgs` entry carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// A piece of a string: its content as written between the quotes (escapes kept), and
    /// whether it closes the string (no `willContinue`).
    Str { raw: &'a str, last: bool },
    /// A number, boolean or null, whole, as written.
    Scalar(&'a str),
}

#[derive(Debug)]
struct Open {
    array: bool,
    /// The step that entered this container (the root's is `None`).
    seg: Option<Seg>,
    members: usize,
    /// The member last finished in it: a path that goes back to it is refused (Vertex sends
    /// a document's members once, in order).
    last: Option<Seg>,
}

/// Turns pieces into argument text, as a client accumulating by path would see the
/// document grow. Holds only the open containers along the current path.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    open: Vec<Open>,
    /// The path of the string left open by a piece with `willContinue`.
    string: Option<Vec<Seg>>,
}

impl Writer {
    /// Appends to `out` the text `piece` at `path` adds. `Err`: a path the document cannot
    /// take (the root itself, a step of the wrong kind, an index out of order, a member
    /// revisited).
    pub(crate) fn piece(&mut self, path: &[Seg], piece: Piece<'_>, out: &mut String) -> Result<(), String> {
        if let Some(open) = &self.string {
            if let (true, Piece::Str { raw, last }) = (open.as_slice() == path, piece) {
                out.push_str(raw);
                if last {
                    out.push('"');
                    self.string = None;
                }
                return Ok(());
            }
            // Another path: the open string ended where its pieces did.
            out.push('"');
            self.string = None;
        }
        let Some((member, parents)) = path.split_last() else {
            return Err("a value at `$` itself (the arguments are an object)".into());
        };
        if self.open.is_empty() {
            out.push('{');
            self.open.push(Open { array: false, seg: None, members: 0, last: None });
        }
        // The open containers below the root that the path still runs through.
        let same = self.open[1..].iter().zip(parents).take_while(|(o, s)| o.seg.as_ref() == Some(*s)).count();
        while self.open.len() > same + 1 {
            self.close_one(out);
        }
        for (k, seg) in parents[same..].iter().enumerate() {
            self.member(seg, out)?;
            let array = matches!(parents.get(same + k + 1).unwrap_or(member), Seg::Index(_));
            out.push(if array { '[' } else { '{' });
            self.open.push(Open { array, seg: Some(seg.clone()), members: 0, last: None });
        }
        self.member(member, out)?;
        if let Some(top) = self.open.last_mut() {
            top.last = Some(member.clone());
        }
        match piece {
            Piece::Scalar(raw) => out.push_str(raw),
            Piece::Str { raw, last } => {
                out.push('"');
                out.push_str(raw);
                if last {
                    out.push('"');
                } else {
                    self.string = Some(path.to_vec());
                }
            }
        }
        Ok(())
    }

    /// Starts member `seg` of the innermost open container: its comma and key.
    fn member(&mut self, seg: &Seg, out: &mut String) -> Result<(), String> {
        let top = self.open.last_mut().expect("the root is open");
        if top.last.as_ref() == Some(seg) {
            return Err(format!("the path goes back to `{}`, which was already written", show(seg)));
        }
        match (top.array, seg) {
            (false, Seg::Key(k)) => {
                if top.members > 0 {
                    out.push(',');
                }
                let _ = serde_json::to_writer(FmtWrite(out), k);
                out.push(':');
            }
            (true, Seg::Index(n)) if *n == top.members => {
                if top.members > 0 {
                    out.push(',');
                }
            }
            (true, Seg::Index(n)) => {
                return Err(format!("array index {n} out of order (the next element is {})", top.members))
            }
            (true, Seg::Key(k)) => return Err(format!("member `{k}` of an array")),
            (false, Seg::Index(n)) => return Err(format!("index {n} of an object")),
        }
        top.members += 1;
        Ok(())
    }

    fn close_one(&mut self, out: &mut String) {
        if let Some(o) = self.open.pop() {
            out.push(if o.array { ']' } else { '}' });
            if let Some(parent) = self.open.last_mut() {
                parent.last = o.seg;
            }
        }
    }

    /// The call ended: closes an open string and every open container. Nothing for a call
    /// that had no piece (a call without arguments, `{}`).
    pub(crate) fn end(&mut self, out: &mut String) {
        if self.string.take().is_some() {
            out.push('"');
        }
        while !self.open.is_empty() {
            self.close_one(out);
        }
    }
}

fn show(seg: &Seg) -> String {
    write_path(std::slice::from_ref(seg)).trim_start_matches('$').to_owned()
}

/// `std::io::Write` into a `String` (serde_json writes keys escaped its way, valid UTF-8).
struct FmtWrite<'a>(&'a mut String);

impl std::io::Write for FmtWrite<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.push_str(std::str::from_utf8(buf).map_err(std::io::Error::other)?);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One leaf of a document: its path and where its value is in the document's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Leaf {
    pub path: Vec<Seg>,
    /// A string's content (between its quotes), or a scalar's text.
    pub raw: std::ops::Range<usize>,
    pub string: bool,
}

/// The leaves of a JSON object document, in order. `Err` says why the document cannot be
/// sent as typed values at paths: it is not one JSON object, it has an empty object or array
/// inside (no piece stands for one), a duplicate key, a key that is not a string of
/// characters (a lone surrogate), or more than [`MAX_DEPTH`] levels. An empty object has no
/// leaves.
pub(crate) fn leaves(doc: &str) -> Result<Vec<Leaf>, String> {
    let mut p = Parser { s: doc.as_bytes(), i: 0, out: Vec::new(), path: Vec::new() };
    p.ws();
    if p.peek() != Some(b'{') {
        return Err("the document is not a JSON object".into());
    }
    p.value(true)?;
    p.ws();
    if p.i != p.s.len() {
        return Err("text after the document's object".into());
    }
    Ok(p.out)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    out: Vec<Leaf>,
    path: Vec<Seg>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        self.ws();
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", c as char, self.i))
        }
    }

    fn value(&mut self, root: bool) -> Result<(), String> {
        self.ws();
        if self.path.len() > MAX_DEPTH {
            return Err(format!("more than {MAX_DEPTH} levels"));
        }
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return if root { Ok(()) } else { Err("an empty object inside the document".into()) };
                }
                let mut keys = std::collections::HashSet::new();
                loop {
                    self.ws();
                    let raw = self.string()?;
                    let key: String = serde_json::from_slice(&self.s[raw.start - 1..raw.end + 1])
                        .map_err(|e| format!("a key that is no string of characters: {e}"))?;
                    if !keys.insert(key.clone()) {
                        return Err(format!("the key {key:?} twice in one object"));
                    }
                    self.eat(b':')?;
                    self.path.push(Seg::Key(key));
                    self.value(false)?;
                    self.path.pop();
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(format!("expected `,` or `}}` at byte {}", self.i)),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                self.ws();
                if self.peek() == Some(b']') {
                    return Err("an empty array inside the document".into());
                }
                let mut n = 0;
                loop {
                    self.path.push(Seg::Index(n));
                    self.value(false)?;
                    self.path.pop();
                    n += 1;
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(());
                        }
                        _ => return Err(format!("expected `,` or `]` at byte {}", self.i)),
                    }
                }
            }
            Some(b'"') => {
                let raw = self.string()?;
                self.out.push(Leaf { path: self.path.clone(), raw, string: true });
                Ok(())
            }
            Some(_) => {
                let start = self.i;
                while matches!(
                    self.peek(),
                    Some(b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z')
                ) {
                    self.i += 1;
                }
                let text = &self.s[start..self.i];
                let ok = matches!(text, b"true" | b"false" | b"null")
                    || serde_json::from_slice::<serde_json::Number>(text).is_ok();
                if !ok {
                    return Err(format!("no JSON value at byte {start}"));
                }
                self.out.push(Leaf { path: self.path.clone(), raw: start..self.i, string: false });
                Ok(())
            }
            None => Err("the document ends early".into()),
        }
    }

    /// A string's content range (after its opening quote, before its closing one), checked:
    /// no control character, every escape one JSON has.
    fn string(&mut self) -> Result<std::ops::Range<usize>, String> {
        if self.peek() != Some(b'"') {
            return Err(format!("expected a string at byte {}", self.i));
        }
        self.i += 1;
        let start = self.i;
        loop {
            match self.peek() {
                None => return Err("a string that never closes".into()),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(start..self.i - 1);
                }
                Some(b'\\') => match self.s.get(self.i + 1) {
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => self.i += 2,
                    Some(b'u')
                        if self
                            .s
                            .get(self.i + 2..self.i + 6)
                            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) =>
                    {
                        self.i += 6
                    }
                    _ => return Err(format!("a bad escape at byte {}", self.i)),
                },
                Some(c) if c < 0x20 => {
                    return Err(format!("a control character in a string at byte {}", self.i))
                }
                Some(_) => self.i += 1,
            }
        }
    }
}

/// Where a string's content may be cut into pieces: every character and escape boundary
/// (a surrogate pair's two escapes are two), relative to the content's start.
pub(crate) fn string_cuts(raw: &str) -> impl Iterator<Item = usize> + '_ {
    let b = raw.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= b.len() {
            return None;
        }
        i += match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'u') => 6,
            b'\\' => 2,
            c if c < 0x80 => 1,
            c if c >= 0xF0 => 4,
            c if c >= 0xE0 => 3,
            _ => 2,
        };
        i = i.min(b.len());
        Some(i)
    })
}

/// A document as the pieces of Vertex's stream write it ([`Writer`] over [`leaves`], each
/// string whole): no whitespace, keys escaped as serde_json escapes them, string contents
/// and numbers as the document wrote them. With it, every place the text can be cut between
/// pieces, ascending (a piece boundary: inside a string's content, after a string or a
/// scalar; the end, which only the call's terminator reaches, is the text's length).
pub(crate) struct Canonical {
    pub text: String,
    pub cuts: Vec<usize>,
}

pub(crate) fn canonical(doc: &str) -> Result<Canonical, String> {
    let leaves = leaves(doc)?;
    let mut w = Writer::default();
    let mut text = String::with_capacity(doc.len());
    let mut cuts = vec![0];
    for leaf in &leaves {
        let raw = &doc[leaf.raw.clone()];
        if leaf.string {
            w.piece(&leaf.path, Piece::Str { raw: "", last: false }, &mut text)?;
            let start = text.len();
            cuts.push(start);
            w.piece(&leaf.path, Piece::Str { raw, last: true }, &mut text)?;
            cuts.extend(string_cuts(raw).map(|c| start + c));
        } else {
            w.piece(&leaf.path, Piece::Scalar(raw), &mut text)?;
        }
        cuts.push(text.len());
    }
    w.end(&mut text);
    cuts.push(text.len());
    cuts.dedup();
    Ok(Canonical { text, cuts })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Seg {
        Seg::Key(k.into())
    }

    #[test]
    fn paths_read_both_forms_and_write_back() {
        assert_eq!(parse_path("$.a.b").unwrap(), [key("a"), key("b")]);
        assert_eq!(parse_path("$.items[3].amount").unwrap(), [key("items"), Seg::Index(3), key("amount")]);
        assert_eq!(parse_path("$['a.b']").unwrap(), [key("a.b")]);
        assert_eq!(parse_path(r#"$["x]'y"]"#).unwrap(), [key("x]'y")]);
        assert_eq!(parse_path(r"$['it\'s']").unwrap(), [key("it's")]);
        for bad in ["a", "$.", "$[", "$[x]", "$['a'", "$..a", "$ a"] {
            assert!(parse_path(bad).is_err(), "{bad}");
        }
        for p in [vec![key("a.b"), Seg::Index(0)], vec![key("it's [x]")], vec![key("__proto__"), key("\n")]] {
            assert_eq!(parse_path(&write_path(&p)).unwrap(), p);
        }
        assert_eq!(write_path(&[key("items"), Seg::Index(0)]), "$.items[0]");
        assert_eq!(write_path(&[key("a.b")]), "$['a.b']");
    }

    #[test]
    fn the_writer_builds_text_by_path() {
        let mut w = Writer::default();
        let mut out = String::new();
        let p = |s: &str| parse_path(s).unwrap();
        w.piece(&p("$.location"), Piece::Str { raw: "Bos", last: false }, &mut out).unwrap();
        w.piece(&p("$.location"), Piece::Str { raw: "ton", last: false }, &mut out).unwrap();
        w.piece(&p("$.location"), Piece::Str { raw: "", last: true }, &mut out).unwrap();
        w.piece(&p("$.r.items[0].n"), Piece::Scalar("1E+2"), &mut out).unwrap();
        w.piece(&p("$.r.items[1]"), Piece::Scalar("null"), &mut out).unwrap();
        w.piece(&p("$['a.b']"), Piece::Str { raw: "\\ud83d", last: false }, &mut out).unwrap();
        w.piece(&p("$['a.b']"), Piece::Str { raw: "\\ude00", last: false }, &mut out).unwrap();
        w.end(&mut out);
        assert_eq!(out, r#"{"location":"Boston","r":{"items":[{"n":1E+2},null]},"a.b":"\ud83d\ude00"}"#);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["a.b"], "😀");
        // Out of order, revisited, or of the wrong kind: refused, never a wrong document.
        let mut w = Writer::default();
        let mut out = String::new();
        w.piece(&p("$.a"), Piece::Scalar("1"), &mut out).unwrap();
        assert!(w.piece(&p("$.a"), Piece::Scalar("2"), &mut out).is_err());
        assert!(w.piece(&p("$.b[1]"), Piece::Scalar("2"), &mut out).is_err());
        assert!(Writer::default().piece(&[], Piece::Scalar("2"), &mut out).is_err());
        // No piece: no text (a call without arguments).
        let mut out = String::new();
        Writer::default().end(&mut out);
        assert_eq!(out, "");
    }

    #[test]
    fn canonical_documents_and_their_cuts() {
        let c = canonical("{ \"a\" : \"x\\u00e9\", \"b\": [1, {\"c\": true}] }").unwrap();
        assert_eq!(c.text, r#"{"a":"x\u00e9","b":[1,{"c":true}]}"#);
        // Inside the string: after `"`, after x, after the escape; after its quote; after 1,
        // after true; the end.
        assert_eq!(c.cuts, [0, 6, 7, 13, 14, 21, 31, 34]);
        let again = canonical(&c.text).unwrap();
        assert_eq!(again.text, c.text, "canonical text is its own canonical form");
        assert_eq!(canonical("{}").unwrap().text, "");
        for no in [
            "[1]",
            "{\"a\":{}}",
            "{\"a\":[]}",
            "{\"a\":1,\"a\":2}",
            "{\"a\":1} x",
            "{\"a\":",
            "{\"\\ud800\":1}",
        ] {
            assert!(canonical(no).is_err(), "{no}");
        }
        let deep = format!("{}1{}", "{\"a\":".repeat(300), "}".repeat(300));
        assert!(canonical(&deep).is_err());
    }
}
