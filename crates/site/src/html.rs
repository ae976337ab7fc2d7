//! The HTML pieces every page shares: escaping, the page frame with its inline style sheet,
//! the notes' Markdown, and relative links between files.

use std::path::{Component, Path, PathBuf};

/// `s` safe as HTML text and inside a double- or single-quoted attribute.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Raw bytes as readable text for a `<pre>`: UTF-8 text as it is (escaped), a line feed as a
/// line break, every other control byte and every byte that is not UTF-8 marked `\r`, `\xNN`
/// so that framing (CRLF, a stray NUL) stays visible.
pub fn bytes_pre(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + bytes.len() / 8);
    let mut rest = bytes;
    while !rest.is_empty() {
        let (good, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, 0),
            Err(e) => {
                let n = e.valid_up_to();
                // Invalid bytes run to the next valid boundary; at least one is shown.
                (std::str::from_utf8(&rest[..n]).unwrap_or_default(), e.error_len().unwrap_or(rest.len() - n))
            }
        };
        let mut chars = good.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\n' => out.push('\n'),
                // A lone CR ends an SSE line too: shown as one.
                '\r' if chars.peek() != Some(&'\n') => out.push_str("<span class=\"ctl\">\\r</span>\n"),
                '\r' => out.push_str("<span class=\"ctl\">\\r</span>"),
                '\t' => out.push_str("<span class=\"ctl\">\\t</span>"),
                c if c.is_control() => {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("<span class=\"ctl\">\\x{b:02x}</span>"));
                    }
                }
                c => out.push_str(&esc(c.encode_utf8(&mut [0u8; 4]))),
            }
        }
        let used = good.len();
        for b in &rest[used..used + bad] {
            out.push_str(&format!("<span class=\"ctl\">\\x{b:02x}</span>"));
        }
        rest = &rest[used + bad..];
    }
    out
}

const STYLE: &str = "
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0 auto;max-width:78rem;padding:1rem 1.5rem;color:#1b1f24;background:#fff}
h1{font-size:1.6rem;margin:.4rem 0 .8rem}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid #d8dee4;padding-bottom:.2rem}
h3{font-size:1.05rem;margin-top:1.6rem}a{color:#0757b5}
table{border-collapse:collapse;margin:.6rem 0}th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f5f7}td.c{text-align:center;white-space:nowrap}
.pass{background:#dcf5e3}.fail{background:#fbe0df}.na{background:#f1f1f1;color:#555}.nt{background:#fff;color:#777;font-style:italic}.differs{background:#fff4d6}
pre{background:#f6f8fa;border:1px solid #d8dee4;padding:.6rem;overflow:auto;max-height:28rem;font-size:13px;white-space:pre-wrap;word-break:break-all}
code{font-size:13px;background:#f6f8fa;padding:0 .2rem}.ctl{color:#a40e26;background:#ffebe9}
.bug{border:1px solid #d0d7de;border-radius:6px;padding:.2rem 1rem .8rem;margin:1rem 0}
.silent{border-left:6px solid #cf222e}.loud{border-left:6px solid #bf8700}.should{border-left:6px solid #8c959f}
.tag{display:inline-block;font-size:12px;border-radius:10px;padding:0 .5rem;margin-left:.4rem;color:#fff;background:#57606a}
.tag.silent-t{background:#cf222e}.tag.loud-t{background:#9a6700}
.note{background:#fffbea;border:1px solid #eedc82;padding:.1rem .9rem;margin:.6rem 0}
nav{font-size:14px;margin-bottom:.6rem}details{margin:.4rem 0}small{color:#57606a}
";

/// A whole page: `title`, then `body` (already HTML).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n",
        esc(title)
    )
}

/// `path` with `.` and `..` resolved without asking the file system (the path need not exist).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c.as_os_str()),
        }
    }
    out
}

/// The relative link from a page in directory `from` to `to` (both absolute), with `/`
/// separators whatever the platform.
pub fn relative(from: &Path, to: &Path) -> String {
    let from: Vec<_> = normalize(from).components().map(|c| c.as_os_str().to_owned()).collect();
    let to: Vec<_> = normalize(to).components().map(|c| c.as_os_str().to_owned()).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); from.len() - common];
    parts.extend(to[common..].iter().map(|p| p.to_string_lossy().into_owned()));
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

/// A note's Markdown as HTML. Raw HTML in the note is shown as text (a note is commentary,
/// not markup), and a relative link, written relative to the note's own directory `base`, is
/// rewritten relative to the page's directory `page_dir`.
pub fn markdown(text: &str, base: &Path, page_dir: &Path) -> String {
    use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
    // A note's headings sit under the page's own h1 and h2, so they start at h4.
    let demote = |l: HeadingLevel| match l {
        HeadingLevel::H1 => HeadingLevel::H4,
        HeadingLevel::H2 => HeadingLevel::H5,
        _ => HeadingLevel::H6,
    };
    let events = Parser::new_ext(text, Options::ENABLE_TABLES).map(|e| match e {
        Event::Html(h) | Event::InlineHtml(h) => Event::Text(h),
        Event::Start(Tag::Heading { level, id, classes, attrs }) => {
            Event::Start(Tag::Heading { level: demote(level), id, classes, attrs })
        }
        Event::End(TagEnd::Heading(level)) => Event::End(TagEnd::Heading(demote(level))),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            let dest = rebase(&dest_url, base, page_dir).map(Into::into).unwrap_or(dest_url);
            Event::Start(Tag::Link { link_type, dest_url: dest, title, id })
        }
        e => e,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// A relative link written from `base`, made relative to `page_dir`; `None` for an absolute
/// URL, a fragment alone or an absolute path.
fn rebase(url: &str, base: &Path, page_dir: &Path) -> Option<String> {
    if url.is_empty()
        || url.starts_with('#')
        || url.starts_with('/')
        || url.contains("://")
        || url.contains(':')
    {
        return None;
    }
    let (path, fragment) = match url.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (url, None),
    };
    let mut link = relative(page_dir, &base.join(path));
    if let Some(f) = fragment {
        link.push('#');
        link.push_str(f);
    }
    Some(link)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_both_quotes() {
        assert_eq!(esc("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    }

    #[test]
    fn raw_bytes_keep_framing_visible() {
        let shown = bytes_pre(b"data: {\"a\":\"<b>\"}\r\n\xff\x00\n");
        assert_eq!(
            shown,
            "data: {&quot;a&quot;:&quot;&lt;b&gt;&quot;}<span class=\"ctl\">\\r</span>\n\
             <span class=\"ctl\">\\xff</span><span class=\"ctl\">\\x00</span>\n"
        );
        assert_eq!(
            bytes_pre(b"a\rb\r"),
            "a<span class=\"ctl\">\\r</span>\nb<span class=\"ctl\">\\r</span>\n"
        );
    }

    #[test]
    fn links_are_relative_between_directories() {
        assert_eq!(
            relative(Path::new("/r/docs/site/sdk"), Path::new("/r/examples/x.py")),
            "../../../examples/x.py"
        );
        assert_eq!(relative(Path::new("/r/site"), Path::new("/r/site/badges/a.svg")), "badges/a.svg");
        assert_eq!(
            rebase(
                "../../../examples/a.md#x",
                Path::new("/r/docs/certification/notes"),
                Path::new("/tmp/s/sdk")
            ),
            Some("../../../r/examples/a.md#x".into())
        );
        assert_eq!(rebase("https://example.com/", Path::new("/a"), Path::new("/b")), None);
    }

    #[test]
    fn a_note_cannot_inject_markup() {
        let html = markdown("<script>alert(1)</script>\n\nand *this*", Path::new("/n"), Path::new("/p"));
        assert!(html.contains("&lt;script&gt;"), "{html}");
        assert!(html.contains("<em>this</em>"), "{html}");
        let html = markdown("# Title\n\n## Part\n", Path::new("/n"), Path::new("/p"));
        assert_eq!(html, "<h4>Title</h4>\n<h5>Part</h5>\n");
    }
}
