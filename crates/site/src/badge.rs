//! The SVG badges: a label on grey and a value on the verdict's colour, the two-part look of
//! the badges READMEs carry, drawn here from the tier cells.

use crate::html::esc;

/// The width a string takes in 11px Verdana, near enough: the common glyphs measured in
/// groups (a badge that is a little wide is fine, one that clips is not).
fn text_width(s: &str) -> usize {
    let px: f64 = s
        .chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | ' ' => 3.9,
            'f' | 't' | 'r' | '(' | ')' | '/' | '-' => 4.9,
            'm' | 'w' | 'M' | 'W' => 10.8,
            c if c.is_ascii_uppercase() => 8.0,
            c if c.is_ascii_digit() => 7.0,
            _ => 6.9,
        })
        .sum();
    px.ceil() as usize
}

/// A badge reading `label | value` with the value on `color` (`#rrggbb`).
pub fn svg(label: &str, value: &str, color: &str) -> String {
    let lw = text_width(label) + 12;
    let vw = text_width(value) + 12;
    let w = lw + vw;
    let (label, value) = (esc(label), esc(value));
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"20\" role=\"img\" aria-label=\"{label}: {value}\">\
<title>{label}: {value}</title>\
<linearGradient id=\"s\" x2=\"0\" y2=\"100%\"><stop offset=\"0\" stop-color=\"#bbb\" stop-opacity=\".1\"/><stop offset=\"1\" stop-opacity=\".1\"/></linearGradient>\
<clipPath id=\"r\"><rect width=\"{w}\" height=\"20\" rx=\"3\" fill=\"#fff\"/></clipPath>\
<g clip-path=\"url(#r)\"><rect width=\"{lw}\" height=\"20\" fill=\"#555\"/><rect x=\"{lw}\" width=\"{vw}\" height=\"20\" fill=\"{color}\"/>\
<rect width=\"{w}\" height=\"20\" fill=\"url(#s)\"/></g>\
<g fill=\"#fff\" text-anchor=\"middle\" font-family=\"Verdana,Geneva,DejaVu Sans,sans-serif\" font-size=\"11\">\
<text x=\"{lx}\" y=\"15\" fill=\"#010101\" fill-opacity=\".3\">{label}</text><text x=\"{lx}\" y=\"14\">{label}</text>\
<text x=\"{vx}\" y=\"15\" fill=\"#010101\" fill-opacity=\".3\">{value}</text><text x=\"{vx}\" y=\"14\">{value}</text></g></svg>\n",
        lx = lw / 2,
        vx = lw + vw / 2,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_badge_is_escaped_and_wide_enough_for_its_text() {
        let s = super::svg("tier 1 <standard>", "2 bugs", "#e05d44");
        assert!(s.contains("tier 1 &lt;standard&gt;: 2 bugs"));
        assert!(!s.contains("<standard>"));
        let width: usize = s.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(width > 6 * "tier 1 <standard>2 bugs".len(), "{width}");
    }
}
