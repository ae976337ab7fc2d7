//! Pretty-printing JSON data for multi-line `data:` framing.
//!
//! Works on the tokens of the text rather than on a parsed value, so key order, number
//! spelling and string escapes stay exactly as the dialect wrote them: only whitespace
//! between tokens changes, and the decoded data is the same JSON document.

/// `data` re-indented over several lines, or `None` when it is not one JSON document.
///
/// Byte by byte outside strings (the document is checked first, so every token is ASCII
/// there); each string copied as one run, its end found by `memchr2` (a payload's strings
/// are most of its bytes).
pub(crate) fn json(data: &str) -> Option<String> {
    serde_json::from_str::<serde::de::IgnoredAny>(data).ok()?;
    let b = data.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(data.len() * 2);
    let mut depth = 0usize;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        for _ in 0..depth {
            out.extend_from_slice(b"  ");
        }
    };
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        i += 1;
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'"' => {
                let start = i - 1;
                // To the closing quote: a backslash skips the byte it escapes (ASCII).
                loop {
                    match memchr::memchr2(b'"', b'\\', &b[i..]) {
                        Some(j) if b[i + j] == b'\\' => i += j + 2,
                        Some(j) => {
                            i += j + 1;
                            break;
                        }
                        None => {
                            i = b.len();
                            break;
                        }
                    }
                }
                out.extend_from_slice(&b[start..i.min(b.len())]);
                i = i.min(b.len());
            }
            b'{' | b'[' => {
                out.push(c);
                // Whitespace skipped to see whether the container is empty.
                while b.get(i).is_some_and(u8::is_ascii_whitespace) {
                    i += 1;
                }
                if let Some(&close @ (b'}' | b']')) = b.get(i) {
                    i += 1;
                    out.push(close);
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            b',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(c),
        }
    }
    // Runs of `data` split at ASCII bytes, and ASCII.
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::json;

    /// [`json`] as it was (the oracle of the tests): a `char` at a time, strings included.
    pub(crate) fn json_before(data: &str) -> Option<String> {
        serde_json::from_str::<serde::de::IgnoredAny>(data).ok()?;
        let mut out = String::with_capacity(data.len() * 2);
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        let mut chars = data.chars().peekable();
        let newline = |out: &mut String, depth: usize| {
            out.push('\n');
            for _ in 0..depth {
                out.push_str("  ");
            }
        };
        while let Some(c) = chars.next() {
            if in_string {
                out.push(c);
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    in_string = false;
                }
                continue;
            }
            match c {
                ' ' | '\t' | '\n' | '\r' => {}
                '"' => {
                    in_string = true;
                    out.push(c);
                }
                '{' | '[' => {
                    out.push(c);
                    // Skip whitespace to see whether the container is empty.
                    while chars.next_if(|n| n.is_ascii_whitespace()).is_some() {}
                    if let Some(&close @ ('}' | ']')) = chars.peek() {
                        chars.next();
                        out.push(close);
                    } else {
                        depth += 1;
                        newline(&mut out, depth);
                    }
                }
                '}' | ']' => {
                    depth = depth.saturating_sub(1);
                    newline(&mut out, depth);
                    out.push(c);
                }
                ',' => {
                    out.push(c);
                    newline(&mut out, depth);
                }
                ':' => out.push_str(": "),
                _ => out.push(c),
            }
        }
        Some(out)
    }

    /// A small xorshift.
    fn rng(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    /// A random JSON value, whitespace between some tokens.
    fn value(next: &mut impl FnMut() -> u64, depth: u32, out: &mut String) {
        let ws = [" ", "\n", "\t", "\r\n", "  "];
        let space = |next: &mut dyn FnMut() -> u64, out: &mut String| {
            if next().is_multiple_of(3) {
                out.push_str(ws[(next() % ws.len() as u64) as usize]);
            }
        };
        let strs = ["", "a", "\\\"", "\\\\", "\\u00e9", "é✈", "{[,:]}", "\\n", "x\\\\\\\"y", " "];
        match next() % if depth > 3 { 3 } else { 5 } {
            0 => out.push_str(["1", "-2.5e3", "true", "false", "null", "0"][(next() % 6) as usize]),
            1 | 2 => {
                out.push('"');
                for _ in 0..next() % 4 {
                    out.push_str(strs[(next() % strs.len() as u64) as usize]);
                }
                out.push('"');
            }
            3 => {
                out.push('[');
                for k in 0..next() % 4 {
                    if k > 0 {
                        out.push(',');
                    }
                    space(next, out);
                    value(next, depth + 1, out);
                    space(next, out);
                }
                out.push(']');
            }
            _ => {
                out.push('{');
                for k in 0..next() % 4 {
                    if k > 0 {
                        out.push(',');
                    }
                    space(next, out);
                    out.push_str(&format!("\"k{k}\""));
                    space(next, out);
                    out.push(':');
                    value(next, depth + 1, out);
                }
                space(next, out);
                out.push('}');
            }
        }
    }

    /// Documents of every shape (nested, empty containers, escapes, non-ASCII, whitespace
    /// between tokens, numbers) and text that is not one document are pretty-printed as the
    /// former printer did.
    #[test]
    fn pretty_printing_agrees_with_the_former_printer() {
        let mut next = rng(0x9E37_79B9_7F4A_7C15);
        let mut docs = 0;
        for round in 0..20000 {
            let mut text = String::new();
            value(&mut next, 0, &mut text);
            // Some not one document: cut short, or with something after it.
            match round % 5 {
                0 => {
                    let mut cut = text.len() * 2 / 3;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                }
                1 => text.push_str(" x"),
                _ => {}
            }
            let got = json(&text);
            docs += usize::from(got.is_some());
            assert_eq!(got, json_before(&text), "{text:?}");
        }
        assert!(docs > 5000, "{docs} documents");
    }

    #[test]
    fn reindents_between_tokens_only() {
        let s = r#"{"a":[1,2,{}],"b":{"c":"x, {y}: \"z\""},"d":[]}"#;
        let p = json(s).unwrap();
        assert_eq!(
            p,
            "{\n  \"a\": [\n    1,\n    2,\n    {}\n  ],\n  \"b\": {\n    \"c\": \"x, {y}: \\\"z\\\"\"\n  },\n  \"d\": []\n}"
        );
        let a: serde_json::Value = serde_json::from_str(s).unwrap();
        let b: serde_json::Value = serde_json::from_str(&p).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn scalars_and_non_json() {
        assert_eq!(json("1.50e3").as_deref(), Some("1.50e3"));
        assert_eq!(json("[DONE]"), None);
        assert_eq!(json("{\"a\": 1} x"), None);
    }
}
