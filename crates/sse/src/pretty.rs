//! Pretty-printing JSON data for multi-line `data:` framing.
//!
//! Works on the tokens of the text rather than on a parsed value, so key order, number
//! spelling and string escapes stay exactly as the dialect wrote them: only whitespace
//! between tokens changes, and the decoded data is the same JSON document.

/// `data` re-indented over several lines, or `None` when it is not one JSON document.
pub(crate) fn json(data: &str) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::json;

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
