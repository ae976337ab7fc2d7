//! Argument documents: the JSON text a model writes for a tool call.
//!
//! A document is rendered from a [`DocPlan`](crate::plan::DocPlan), a flat list of small
//! choices, into one `String`: pick a [`Template`] (a realistic tool from the seeds'
//! support-assistant world), then render each field from a few choice bytes. The byte-to-
//! choice tables put the simplest choice at 0 and weight the adversarial ones (escapes,
//! surrogate pairs, raw non-ASCII, spaces, markdown, every number form, varied whitespace)
//! heavily enough that every split class has something to land in. No recursive value
//! trees: rendering is a single pass over fixed templates, which is what keeps generation
//! fast. The templates also give the schema profile its JSON Schemas.

use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use crate::lex::Resume;
use crate::plan::{DocPlan, Form, Violation};

/// The type of a field's value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// An order or SKU id (`A-4471`).
    Id,
    /// An ISO date (`2024-03-01`).
    Date,
    /// A city name, often with non-ASCII or `\u` escapes (`M\u00e9rida`).
    City,
    /// Free text: words, spaces, escapes, non-ASCII, markdown.
    Text,
    /// Free text that is long (≥ 400 bytes) when the document plan asks for it.
    LongText,
    /// Free text or `null`.
    NullableText,
    Enum(&'static [&'static str]),
    Int,
    Number,
    Bool,
    Object(&'static [Field]),
    Array(&'static Kind),
}

#[derive(Debug)]
pub(crate) struct Field {
    pub key: &'static str,
    pub kind: Kind,
}

/// A tool the model can call: its name, its fields in writing order, and how many of the
/// first fields are required.
#[derive(Debug)]
pub(crate) struct Template {
    pub name: &'static str,
    pub fields: &'static [Field],
    pub required: usize,
}

const STATUS: &[&str] = &["open", "shipped", "refunded", "cancelled"];
const PRIORITY: &[&str] = &["low", "normal", "urgent"];

/// The tool set. Index 0 is the simplest; `search_orders` carries the seeds' flat example,
/// `list_orders` the nested filter, `create_ticket` the long description.
pub(crate) static TOOLS: [Template; 7] = [
    Template {
        name: "lookup_order",
        fields: &[
            Field { key: "order_id", kind: Kind::Id },
            Field { key: "include_line_items", kind: Kind::Bool },
        ],
        required: 1,
    },
    Template {
        name: "search_orders",
        fields: &[
            Field { key: "status", kind: Kind::Enum(STATUS) },
            Field { key: "from", kind: Kind::Date },
            Field { key: "to", kind: Kind::Date },
            Field { key: "limit", kind: Kind::Int },
        ],
        required: 1,
    },
    Template {
        name: "get_weather",
        fields: &[
            Field { key: "city", kind: Kind::City },
            Field { key: "units", kind: Kind::Enum(&["metric", "imperial"]) },
        ],
        required: 1,
    },
    Template {
        name: "list_orders",
        fields: &[
            Field {
                key: "filter",
                kind: Kind::Object(&[
                    Field { key: "status", kind: Kind::Enum(STATUS) },
                    Field {
                        key: "customer",
                        kind: Kind::Object(&[
                            Field { key: "name", kind: Kind::Text },
                            Field { key: "email", kind: Kind::Text },
                        ]),
                    },
                    Field { key: "tags", kind: Kind::Array(&Kind::Text) },
                ]),
            },
            Field { key: "limit", kind: Kind::Int },
            Field {
                key: "sort",
                kind: Kind::Array(&Kind::Object(&[
                    Field { key: "field", kind: Kind::Enum(&["created_at", "total"]) },
                    Field { key: "desc", kind: Kind::Bool },
                ])),
            },
        ],
        required: 1,
    },
    Template {
        name: "create_ticket",
        fields: &[
            Field { key: "title", kind: Kind::Text },
            Field { key: "priority", kind: Kind::Enum(PRIORITY) },
            Field { key: "description", kind: Kind::LongText },
            Field { key: "project", kind: Kind::Id },
            Field { key: "labels", kind: Kind::Array(&Kind::Text) },
        ],
        required: 2,
    },
    Template {
        name: "update_inventory",
        fields: &[
            Field { key: "sku", kind: Kind::Id },
            Field { key: "quantity", kind: Kind::Int },
            Field { key: "price", kind: Kind::Number },
            Field { key: "note", kind: Kind::NullableText },
        ],
        required: 2,
    },
    Template { name: "get_time", fields: &[], required: 0 },
];

/// Most fields of a template or nested object.
const MAX_FIELDS: usize = 5;
static NO_FIELD: Field = Field { key: "", kind: Kind::Bool };

/// Index of the tool without parameters (its documents are empty or `{}`).
pub(crate) const GET_TIME: usize = 6;
/// Index of the tool whose description field is long.
pub(crate) const CREATE_TICKET: usize = 4;

pub(crate) fn template(tool: u8) -> &'static Template {
    &TOOLS[tool as usize % TOOLS.len()]
}

/// Whether the template has a free-text field a long value can go in.
pub(crate) fn has_text(t: &Template) -> bool {
    t.fields.iter().any(|f| matches!(f.kind, Kind::Text | Kind::LongText | Kind::NullableText))
}

// --- Choice tables. Entries are JSON string content as written (already escaped). ---

const WORDS: &[&str] = &[
    "order", "refund", "the", "March", "invoice", "run", "ops", "3rd", "A-4471", "shipped", "from", "urgent",
    "request", "line", "one", "two",
];
const SPACES: &[&str] = &[" ", " ", " ", "  "];
const ESCAPES: &[&str] = &["\\n", "\\\"", "\\\\", "\\/", "\\t", "\\r\\n", "\\b", "\\f"];
const UNICODE: &[&str] = &[
    "\\u00e9",
    "\\u00E9",
    "\\u6771\\u4eac",
    "\\ud83d\\ude00",
    "\\u0041",
    "\\u00fc",
    "\\u2014",
    "\\uD83C\\uDF89",
    // Every form Unicode has, escaped: decomposed (e + combining acute), what NFC or NFKC
    // change (Angstrom sign, a ligature, fullwidth A, Hangul jamo), joiners and bidi marks,
    // the line and paragraph separators, the byte order mark, noncharacters, a ZWJ sequence.
    "e\\u0301",
    "\\u212b",
    "\\ufb01",
    "\\uff21",
    "\\u1112\\u1161\\u11ab",
    "\\u200d",
    "\\u200f",
    "\\u2028",
    "\\u2029",
    "\\ufeff",
    "\\ufffe",
    "\\udbff\\udfff",
    "\\ud83d\\udc68\\u200d\\ud83d\\udc69",
];
/// Raw non-ASCII, in every form: precomposed, then what Unicode normalization would change
/// (decomposed é, the Angstrom sign, Hangul jamo, a ligature, fullwidth), joiners and bidi
/// controls, raw U+2028/U+2029 (legal inside JSON strings), U+FEFF, noncharacters and astral
/// characters.
const RAW: &[&str] = &[
    "é",
    "Mérida",
    "東京",
    "😀",
    "ü",
    "—",
    "ñ",
    "🎉",
    "e\u{301}",
    "\u{212b}",
    "\u{1112}\u{1161}\u{11ab}",
    "A\u{30a}",
    "\u{2126}",
    "o\u{308}",
    "Zu\u{308}rich",
    "\u{fb01}",
    "\u{ff21}",
    "👨\u{200d}👩\u{200d}👧",
    "\u{200f}",
    "\u{202e}abc\u{202c}",
    "\u{2028}",
    "\u{2029}",
    "\u{feff}",
    "\u{fdd0}",
    "\u{10ffff}",
    "𝄞",
];
const MARKDOWN: &[&str] = &["*both*", "`", "`code`", "# ", "> ", "_x_", "**bold**", "- item", "[a](b)"];

/// Sentences that make a long value: each carries escapes, non-ASCII and spaces, so a long
/// document exercises every split class by itself (as the seeds' 610-byte ticket did).
const SENTENCES: &[&str] = &[
    "The 03-14 run aborted after the \\\"ledger sync\\\" step. ",
    "Customer says *both* invoices are wrong \\u2014 see `INV-2291`.\\n",
    "Steps to reproduce:\\n1. open the order\\n2. click \\\"Refund\\\"\\n",
    "Exports land in C:\\\\exports\\\\march\\\\ and https:\\/\\/example.com\\/orders. ",
    "Reported from M\\u00e9rida by Zoe\u{308} (東京 office) 😀. ",
    "  Indented line with trailing spaces   \\n",
    "> quoted from the ops channel: # not a heading\\n",
    "Totals: 1,204.50 EUR vs 1,240.05 EUR \\u2014 off by 35.55. ",
];

/// Lines of a file body (long documents): every escape JSON has, code, tabs, controls.
const FILE_LINES: &[&str] = &[
    "fn main() {\\n\\tprintln!(\\\"hello, {}\\\", name);\\n}\\n",
    "\\tif (a \\u003c b \\u0026\\u0026 c \\u003e d) { return \\\"\\\\\\\"; }\\r\\n",
    "path = \\\"C:\\\\Users\\\\zo\\u00eb\\\\notes.txt\\\"\\n",
    "bell\\u0007 nul\\u0000 esc\\u001b del\\u007f\\b\\f\\n",
    "url: https:\\/\\/example.com\\/a?b=1\\u0026c=2\\n",
    "// Mérida, 東京, 😀, e\u{301}, \\ud83d\\ude00, \u{2028} \\u2029\\n",
    "    return x * 2;  // trailing spaces   \\n",
    "<div class=\\\"note\\\">\\u003cscript\\u003e</div>\\n",
];

const CITIES: &[&str] = &[
    "Oslo",
    "M\\u00e9rida",
    "Mérida",
    "S\\u00e3o Paulo",
    "東京",
    "\\u6771\\u4eac",
    " New York ",
    "A\u{30a}rhus",
    "Zu\u{308}rich",
    "Z\\u00fcrich",
];
/// Integers of every magnitude: small ones most often, then 2^53 ± 1, the 64-bit edges and
/// past them (which a parser that goes through a double, or through i64, changes).
const INTS: &[&str] = &[
    "0",
    "20",
    "1",
    "-1",
    "3",
    "50",
    "100",
    "1000",
    "250",
    "9007199254740991",
    "9007199254740993",
    "-9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "123456789012345678901234567890",
    "-0",
];
/// Numbers of every form: exponents, signed zeros, and decimals longer than a double keeps.
const NUMBERS: &[&str] = &[
    "0",
    "1.5",
    "-1",
    "1e3",
    "-2.5E-2",
    "0.0",
    "1E+2",
    "12.75",
    "-0",
    "3.14159",
    "2.5e-3",
    "100",
    "19.99",
    "-0.5",
    "1e-7",
    "5e0",
    "-0.0",
    "0.1000000000000000055511151231257827021181583404541015625",
    "3.14159265358979323846264338327950288",
    "1.00000000000000011102230246251565404",
    "123456789.123456789123456789",
    "6.02214076E23",
];
/// Number forms a strict JSON parser refuses (a document holding one is unparseable).
const BAD_NUMBERS: &[&str] = &["NaN", "Infinity", "-Infinity", "01", "1.", ".5", "+1", "0x1F", "1e", "-"];
const BAD_ENUMS: &[&str] = &["P1", "URGENT", "high", "Open", "pending"];
const BAD_ESCAPES: &[&str] = &["\\q", "\\x41", "\\u12G4", "\\U00e9", "\\'"];
/// Lone surrogate escapes: no Unicode string holds them, so a strict parser refuses them.
const LONE_SURROGATES: &[&str] = &["\\ud800", "\\udc00", "\\uD83D x", "\\ude00\\ud83d"];
/// Documents of only whitespace (not "no argument bytes": that alone means `{}`).
const WHITESPACE_ONLY: &[&str] = &[" ", "\n", "  \n\t", "\r\n", "\t\t"];
/// Top-level values that are not objects: parsed and dispatched as written (a schema that
/// asks for an object refuses them).
const NOT_OBJECTS: &[&str] = &["42", "\"text\"", "[1, 2]", "null", "true", "[]", "[{\"a\": 1}]", "-0.5"];
const RAW_CONTROLS: &[&str] = &["\n", "\t", "\u{1}"];
const GARBAGE: &[&str] = &["x", "]", ",", "}", " trailing", "\"\""];
const TRAILING_WS: &[&str] = &["\n", " ", "  \n", "\t"];

/// One piece of string content. Ranges of the byte choose the family: words (0..80),
/// spaces, escapes, `\u` escapes, raw non-ASCII, markdown.
fn piece(b: u8) -> (&'static str, bool) {
    let i = b as usize;
    match b {
        0..=79 => (WORDS[i % WORDS.len()], true),
        80..=119 => (SPACES[i % SPACES.len()], false),
        120..=159 => (ESCAPES[i % ESCAPES.len()], false),
        160..=189 => (UNICODE[i % UNICODE.len()], false),
        190..=219 => (RAW[i % RAW.len()], false),
        _ => (MARKDOWN[i % MARKDOWN.len()], false),
    }
}

/// Reads choice bytes; past the end every choice is 0 (the simplest).
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn next(&mut self) -> u8 {
        let b = self.bytes.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
}

/// Where whitespace may go between tokens.
#[derive(Clone, Copy)]
enum Gap {
    AfterOpen,
    BeforeColon,
    AfterColon,
    BeforeComma,
    AfterComma,
    BeforeClose,
}

struct Writer<'a> {
    out: &'a mut String,
    ws: u8,
    ws_bytes: Cursor<'a>,
    /// Pending deliberate defects, each consumed by the first place it fits.
    bad_string: Option<&'static str>,
    bad_enum: Option<&'static str>,
    /// Make the first long-capable text long (`long_kind_only`: only a `LongText` field).
    long: bool,
    long_kind_only: bool,
}

impl Writer<'_> {
    fn gap(&mut self, g: Gap, depth: usize) {
        // The canonical gap is a space or nothing: pushed as a character (a string of one
        // byte or none would cost a copy call).
        let canonical = matches!(g, Gap::AfterColon | Gap::AfterComma);
        match self.ws {
            0 => {
                if canonical {
                    self.out.push(' ');
                }
            }
            1 => {}
            2 => match g {
                Gap::AfterOpen | Gap::AfterComma => self.newline(depth + 1),
                Gap::BeforeClose => self.newline(depth),
                Gap::AfterColon => self.out.push(' '),
                _ => {}
            },
            _ => {
                let s = match self.ws_bytes.next() % 8 {
                    0 if canonical => " ",
                    0 | 1 => "",
                    2 => " ",
                    3 => "  ",
                    4 => "\n",
                    5 => "\t",
                    6 => "\r\n",
                    _ => "\n    ",
                };
                self.out.push_str(s);
            }
        }
    }

    fn newline(&mut self, depth: usize) {
        self.out.push('\n');
        for _ in 0..depth {
            self.out.push_str("  ");
        }
    }

    fn key(&mut self, k: &str) {
        self.out.push('"');
        self.out.push_str(k);
        self.out.push('"');
    }

    fn object(&mut self, fields: &[(&Field, &[u8])], depth: usize, wrong_first: bool) {
        self.out.push('{');
        if fields.is_empty() {
            self.out.push('}');
            return;
        }
        self.gap(Gap::AfterOpen, depth);
        for (i, (f, bytes)) in fields.iter().enumerate() {
            if i > 0 {
                self.gap(Gap::BeforeComma, depth);
                self.out.push(',');
                self.gap(Gap::AfterComma, depth);
            }
            self.key(f.key);
            self.gap(Gap::BeforeColon, depth);
            self.out.push(':');
            self.gap(Gap::AfterColon, depth);
            if wrong_first && i == 0 {
                self.wrong_type(f.kind);
            } else {
                self.value(f.kind, &mut Cursor { bytes, at: 0 }, depth + 1);
            }
        }
        self.gap(Gap::BeforeClose, depth);
        self.out.push('}');
    }

    /// A value of the wrong JSON type for `kind` (schema violation).
    fn wrong_type(&mut self, kind: Kind) {
        self.out.push_str(match kind {
            Kind::Int => "\"20\"",
            Kind::Number => "\"1.5\"",
            Kind::Bool => "\"true\"",
            Kind::Object(_) => "\"open\"",
            Kind::Array(_) => "\"a, b\"",
            _ => "42",
        });
    }

    fn value(&mut self, kind: Kind, c: &mut Cursor<'_>, depth: usize) {
        match kind {
            Kind::Id => {
                let (p, n) = (c.next(), c.next());
                self.string_with(|s| {
                    match p % 4 {
                        0 => {
                            s.push_str("A-");
                            decimal(s, 4400 + usize::from(n), 1);
                        }
                        1 => {
                            s.push_str("ORD-2024-");
                            decimal(s, usize::from(n) * 7, 4);
                        }
                        2 => {
                            s.push_str("A\\u002d");
                            decimal(s, 4400 + usize::from(n), 1);
                        }
                        _ => {
                            s.push_str("sku_");
                            hex2(s, n);
                            hex2(s, p);
                        }
                    };
                });
            }
            Kind::Date => {
                let (m, d, t) = (c.next(), c.next(), c.next());
                self.string_with(|s| {
                    s.push_str("2024-");
                    decimal(s, 1 + usize::from(m % 12), 2);
                    s.push('-');
                    decimal(s, 1 + usize::from(d % 28), 2);
                    if t % 4 == 3 {
                        s.push_str("T09:30:00Z");
                    }
                });
            }
            Kind::City => {
                let b = c.next();
                self.string_with(|s| s.push_str(CITIES[b as usize % CITIES.len()]));
            }
            Kind::Text | Kind::LongText => self.text(kind, c),
            Kind::NullableText => {
                if c.next() % 4 == 3 {
                    self.out.push_str("null");
                } else {
                    self.text(kind, c);
                }
            }
            Kind::Enum(values) => {
                let (v, spell, at) = (c.next(), c.next(), c.next());
                if let Some(bad) = self.bad_enum.take() {
                    self.string_with(|s| s.push_str(bad));
                    return;
                }
                let v = values[v as usize % values.len()];
                self.string_with(|s| {
                    if spell % 5 == 4 {
                        // The same value with one character written as a `\u` escape.
                        let i = at as usize % v.len();
                        s.push_str(&v[..i]);
                        s.push_str("\\u00");
                        hex2(s, v.as_bytes()[i]);
                        s.push_str(&v[i + 1..]);
                    } else {
                        s.push_str(v);
                    }
                });
            }
            Kind::Int => self.out.push_str(INTS[c.next() as usize % INTS.len()]),
            Kind::Number => self.out.push_str(NUMBERS[c.next() as usize % NUMBERS.len()]),
            Kind::Bool => self.out.push_str(if c.next().is_multiple_of(2) { "false" } else { "true" }),
            Kind::Object(fields) => {
                // Field 0 always (nested objects require it); the others by a presence mask.
                // Nested fields read the rest of the cursor, each from its own offset so
                // siblings do not mirror each other.
                let mask = c.next();
                let rest = &c.bytes[c.at.min(c.bytes.len())..];
                let mut present = [(&fields[0], &[][..]); MAX_FIELDS];
                let mut n = 0;
                for (i, f) in fields.iter().enumerate().take(MAX_FIELDS) {
                    if i == 0 || mask & (1 << i) != 0 {
                        present[n] = (f, rest.get(n * 3..).unwrap_or(&[]));
                        n += 1;
                    }
                }
                self.object(&present[..n], depth, false);
                c.at += 3 * n;
            }
            Kind::Array(elem) => {
                let n = c.next() % 4;
                self.out.push('[');
                for i in 0..n {
                    if i > 0 {
                        self.gap(Gap::BeforeComma, depth);
                        self.out.push(',');
                        match self.ws {
                            1 => {}
                            3 => self.gap(Gap::AfterComma, depth),
                            _ => self.out.push(' '),
                        }
                    }
                    self.value(*elem, c, depth + 1);
                }
                self.out.push(']');
            }
        }
    }

    /// A string value; a pending bad escape or raw control character goes at its start.
    fn string_with(&mut self, body: impl FnOnce(&mut String)) {
        self.out.push('"');
        if let Some(bad) = self.bad_string.take() {
            self.out.push_str(bad);
        }
        body(self.out);
        self.out.push('"');
    }

    fn text(&mut self, kind: Kind, c: &mut Cursor<'_>) {
        let n = c.next() % 8;
        let long = self.long && (matches!(kind, Kind::LongText) || !self.long_kind_only);
        if long {
            self.long = false;
        }
        let mut pieces = [0u8; 8];
        for p in pieces.iter_mut().take(n as usize) {
            *p = c.next();
        }
        let target = if long { 400 + 120 * usize::from(c.next() % 4) } else { 0 };
        let mut sentence_choices = [0u8; 8];
        if long {
            for s in &mut sentence_choices {
                *s = c.next();
            }
        }
        self.string_with(|s| {
            let start = s.len();
            let mut prev_word = false;
            for &p in &pieces[..n as usize] {
                let (text, word) = piece(p);
                if word && prev_word {
                    s.push(' ');
                }
                s.push_str(text);
                prev_word = word;
            }
            let mut k = 0;
            while s.len() - start < target {
                let choice = sentence_choices[k % sentence_choices.len()] as usize + k;
                s.push_str(SENTENCES[choice % SENTENCES.len()]);
                k += 1;
            }
        });
    }
}

/// Renders the document a call's arguments hold, before any cut. `keys` is how many of the
/// template's fields are written (clamped to the required ones and the template's length).
/// A huge document also gets lexer states to resume from (offsets in the document, which
/// starts at `out`'s length), so that finding its split points lexes little of it.
pub(crate) fn render(
    tool: u8,
    plan: &DocPlan,
    keys: usize,
    schema: bool,
    max_size: usize,
    out: &mut String,
    resumes: &mut Vec<Resume>,
) {
    let t = template(tool);
    let form = plan.form();
    let pick = |table: &[&'static str]| table[plan.form_arg as usize % table.len()];
    match form {
        Form::Empty => return,
        Form::WhitespaceOnly => return out.push_str(pick(WHITESPACE_ONLY)),
        Form::NotObject => return out.push_str(pick(NOT_OBJECTS)),
        _ => {}
    }
    let violation = if schema { plan.violation() } else { Violation::None };
    let start = out.len();
    let mut w = Writer {
        out,
        ws: plan.ws % 4,
        ws_bytes: Cursor { bytes: &plan.ws_bytes, at: 0 },
        bad_string: match form {
            Form::BadEscape => Some(BAD_ESCAPES[plan.form_arg as usize % BAD_ESCAPES.len()]),
            Form::RawControl => Some(RAW_CONTROLS[plan.form_arg as usize % RAW_CONTROLS.len()]),
            Form::LoneSurrogate => Some(LONE_SURROGATES[plan.form_arg as usize % LONE_SURROGATES.len()]),
            _ => None,
        },
        bad_enum: (violation == Violation::Enum).then(|| BAD_ENUMS[plan.form_arg as usize % BAD_ENUMS.len()]),
        long: plan.long != 0,
        long_kind_only: t.fields.iter().any(|f| matches!(f.kind, Kind::LongText)),
    };
    let n = keys.clamp(t.required, t.fields.len());
    let skip_first = violation == Violation::Missing && t.required > 0;
    let mut fields = [(&NO_FIELD, &[][..]); MAX_FIELDS];
    let mut count = 0;
    for (i, f) in t.fields[..n].iter().enumerate().skip(usize::from(skip_first)) {
        fields[count] = (f, plan.fields.get(i).map_or(&[][..], |b| &b[..]));
        count += 1;
    }
    let fields = &fields[..count];
    w.object(fields, 0, violation == Violation::WrongType);
    let unplaced_enum = w.bad_enum.is_some();
    let unplaced_string = w.bad_string.is_some();
    if unplaced_enum {
        // No enum field was written: violate by type instead.
        w.out.truncate(start);
        w.bad_enum = None;
        w.object(fields, 0, true);
    }
    // Fields added after the template's: the degenerate forms' and a huge document's.
    match form {
        Form::BadNumber => add_field(w.out, start, "count", |o| o.push_str(pick(BAD_NUMBERS))),
        Form::DuplicateKey => {
            // The first key again, with another value of its kind (or a key of its own).
            let again = [plan.form_arg.wrapping_add(101), 7, 3, 200, 5, 9, 11, 13, 17, 19, 23, 29];
            match fields.first() {
                Some((f, _)) => {
                    // Mostly of another type, which is sure to differ from the first value;
                    // sometimes of the same kind.
                    let (key, kind) = (f.key, f.kind);
                    add_field(w.out, start, key, |_| {});
                    w.out.pop();
                    if plan.form_arg % 4 != 3 {
                        w.wrong_type(kind);
                    } else {
                        w.value(kind, &mut Cursor { bytes: &again, at: 0 }, 1);
                    }
                    w.out.push('}');
                }
                None => {
                    add_field(w.out, start, "a", |o| o.push('1'));
                    add_field(w.out, start, "a", |o| o.push('2'));
                }
            }
        }
        Form::Deep => {
            let depth = 128 + plan.form_arg as usize % 160;
            // Nine bytes open four levels, four close them.
            w.out.reserve(16 + depth * 13 / 4);
            add_field(w.out, start, "tree", |o| {
                deep(o, depth, Marks { resumes: &mut *resumes, start, last: 0 })
            })
        }
        Form::LongKey => {
            let key = long_key(1024 + 24 * plan.form_arg as usize);
            w.out.reserve(key.len() + 8);
            add_field(w.out, start, key, |o| o.push('1'));
        }
        _ => {}
    }
    if plan.long == 2 {
        let target = huge_size(plan.size, max_size);
        // Resume points only where nothing before the field can be a lexical error.
        let marks = (!matches!(form, Form::BadEscape | Form::RawControl | Form::BadNumber))
            .then_some(Marks { resumes, start, last: 0 });
        if plan.size.is_multiple_of(2) {
            add_field(w.out, start, "attachment", |o| file_body(o, target, plan.size, marks));
        } else {
            add_field(w.out, start, "records", |o| records(o, target, plan.size, marks));
        }
    }
    if unplaced_string {
        // No string to break: the document gets trailing garbage instead.
        w.out.push_str(GARBAGE[plan.form_arg as usize % GARBAGE.len()]);
    }
    match form {
        Form::TrailingWs => out.push_str(TRAILING_WS[plan.form_arg as usize % TRAILING_WS.len()]),
        Form::Concat => {
            let whole = start..out.len();
            out.reserve(whole.len() + 1);
            out.push_str(["", " ", "\n"][plan.form_arg as usize % 3]);
            out.extend_from_within(whole);
        }
        Form::Garbage => out.push_str(GARBAGE[plan.form_arg as usize % GARBAGE.len()]),
        _ => {}
    }
}

/// A key of at least `len` bytes: pieces appended, each chosen by the length so far, until
/// it is that long. (Every key is a prefix of the longest, made once.)
fn long_key(len: usize) -> &'static str {
    static LONGEST: OnceLock<(String, Vec<usize>)> = OnceLock::new();
    let (key, ends) = LONGEST.get_or_init(|| {
        let mut key = String::new();
        let mut ends = vec![0];
        while key.len() < 1024 + 24 * 255 {
            key.push_str(["key_", "Mérida_", "\\u00e9", "東京", "x1"][key.len() % 5]);
            ends.push(key.len());
        }
        (key, ends)
    });
    &key[..ends[ends.partition_point(|&e| e < len)]]
}

/// Adds `"key": value` as the last field of the object that starts at `start` (its last
/// `}` is the object's close: nothing is appended before these fields).
fn add_field(out: &mut String, start: usize, key: &str, value: impl FnOnce(&mut String)) {
    if let Some(close) = out[start..].rfind('}') {
        out.truncate(start + close);
    }
    let empty = out[start..].trim_end().ends_with('{');
    out.push_str(if empty { "\"" } else { ", \"" });
    out.push_str(key);
    out.push_str("\": ");
    value(out);
    out.push('}');
}

/// A value nested `depth` levels: arrays, with an object every fourth level (the value of a
/// field of the top-level object). Resume points every sixteen levels.
fn deep(out: &mut String, depth: usize, marks: Marks<'_>) {
    // Level `i` opens with `[`, or `{"n": ` when `i % 4 == 3`, and closes with `]` or `}`:
    // the openings of a value are a prefix of the deepest one's, its closes a suffix.
    static DEEPEST: OnceLock<(String, String)> = OnceLock::new();
    let (open, close) = DEEPEST.get_or_init(|| {
        let levels = 128 + 160;
        let open = (0..levels).map(|i| if i % 4 == 3 { "{\"n\": " } else { "[" }).collect();
        let close = (0..levels).rev().map(|i| if i % 4 == 3 { '}' } else { ']' }).collect();
        (open, close)
    });
    assert!(depth <= close.len(), "no deeper than the deepest");
    // Nine bytes open four levels.
    let opened = |levels: usize| 9 * (levels / 4) + levels % 4;
    let at = out.len() - marks.start;
    out.push_str(&open[..opened(depth)]);
    for levels in (16..=depth).step_by(16) {
        marks.resumes.push(Resume::deep_open(at + opened(levels), levels as u16));
    }
    out.push('1');
    let at = out.len() - marks.start;
    out.push_str(&close[close.len() - depth..]);
    // After the close of level `i`, `i` levels are open.
    for i in (16..depth).step_by(16).rev() {
        marks.resumes.push(Resume::deep_close(at + depth - i, i as u16));
    }
    Marks::end(Some(marks), out.len());
}

/// The size of a huge document: from 4 KiB up to `max` (most often the smaller sizes, so
/// that the default mix stays fast), as `choice` picks.
pub(crate) fn huge_size(choice: u8, max: usize) -> usize {
    let max = max.max(crate::HUGE_MIN);
    let mut levels = 0;
    while crate::HUGE_MIN << (levels + 1) <= max {
        levels += 1;
    }
    let c = choice as usize;
    let level = if max > crate::HUGE_DEFAULT_MAX {
        c % (levels + 1)
    } else {
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 4][c % 16].min(levels)
    };
    let base = crate::HUGE_MIN << level;
    (base + base * (c * 37 % 100) / 100).min(max)
}

/// Where a huge field records its resume points: `start` is the document's first byte in
/// the output, `last` the output length at the last point recorded.
struct Marks<'a> {
    resumes: &'a mut Vec<Resume>,
    start: usize,
    last: usize,
}

impl Marks<'_> {
    /// One point in some 64 bytes: resuming lexes at most about that far before a question's
    /// start.
    fn mark(marks: &mut Option<Marks<'_>>, at: usize, resume: fn(usize) -> Resume) {
        if let Some(m) = marks {
            if at - m.last >= 64 {
                m.resumes.push(resume(at - m.start));
                m.last = at;
            }
        }
    }

    /// The point right after the field's value.
    fn end(marks: Option<Marks<'_>>, at: usize) {
        if let Some(m) = marks {
            m.resumes.push(Resume::after_field(at - m.start));
        }
    }
}

/// `{"path": ..., "content": "..."}`: a file body of about `target` bytes (the value of a
/// field of the top-level object).
fn file_body(out: &mut String, target: usize, choice: u8, mut marks: Option<Marks<'_>>) {
    let start = out.len();
    out.reserve(target + 64);
    out.push_str("{\"path\": \"src/m\\u00f3dulo/lib.rs\", \"content\": \"");
    let mut k = choice as usize;
    while out.len() - start < target {
        // Between lines, inside the content string and in no escape.
        Marks::mark(&mut marks, out.len(), Resume::nested_string);
        out.push_str(FILE_LINES[k % FILE_LINES.len()]);
        k += 1;
    }
    out.push_str("\"}");
    Marks::end(marks, out.len());
}

/// `[{...}, ...]`: records until about `target` bytes (the value of a field of the top-level
/// object).
fn records(out: &mut String, target: usize, choice: u8, mut marks: Option<Marks<'_>>) {
    let start = out.len();
    out.reserve(target + 256);
    out.push('[');
    let mut k = 0usize;
    while out.len() - start < target {
        if k > 0 {
            out.push_str(", ");
            // Where the next record starts.
            Marks::mark(&mut marks, out.len(), Resume::array_element);
        }
        let c = (choice as usize + k) % 256;
        // `{"id": k, "sku": "A-…", "qty": …, "price": …, "note": "…", "ok": …}`
        out.push_str("{\"id\": ");
        decimal(out, k, 1);
        out.push_str(", \"sku\": \"A-");
        decimal(out, 4400 + c, 1);
        out.push_str("\", \"qty\": ");
        out.push_str(INTS[c % INTS.len()]);
        out.push_str(", \"price\": ");
        out.push_str(NUMBERS[c % NUMBERS.len()]);
        out.push_str(", \"note\": \"");
        out.push_str(SENTENCES[c % SENTENCES.len()]);
        out.push_str("\", \"ok\": ");
        out.push_str(if c.is_multiple_of(2) { "true}" } else { "false}" });
        k += 1;
    }
    out.push(']');
    Marks::end(marks, out.len());
}

/// `n` in decimal, zero-padded to `width` digits (as `{n:0width$}` writes it, without the
/// formatting machinery).
fn decimal(out: &mut String, n: usize, width: usize) {
    let mut digits = [b'0'; 20];
    let (mut n, mut k) = (n, digits.len());
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[k.min(digits.len() - width)..] {
        out.push(char::from(d));
    }
}

/// `b` as two lowercase hex digits (`{b:02x}`).
fn hex2(out: &mut String, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(char::from(HEX[usize::from(b >> 4)]));
    out.push(char::from(HEX[usize::from(b & 15)]));
}

/// The JSON Schema of a tool's input, shared by every case that offers the tool.
pub(crate) fn schema(tool: usize) -> &'static std::sync::Arc<Value> {
    static SCHEMAS: OnceLock<Vec<std::sync::Arc<Value>>> = OnceLock::new();
    &SCHEMAS.get_or_init(|| {
        TOOLS
            .iter()
            .map(|t| {
                let keys: Vec<&str> = t.fields[..t.required].iter().map(|f| f.key).collect();
                std::sync::Arc::new(object_schema(t.fields, &keys))
            })
            .collect()
    })[tool]
}

fn object_schema(fields: &[Field], required: &[&str]) -> Value {
    let mut props = Map::new();
    for f in fields {
        props.insert(f.key.to_owned(), kind_schema(f.kind));
    }
    json!({ "type": "object", "properties": props, "required": required })
}

fn kind_schema(kind: Kind) -> Value {
    match kind {
        Kind::Id | Kind::Date | Kind::City | Kind::Text | Kind::LongText => json!({ "type": "string" }),
        Kind::NullableText => json!({ "type": ["string", "null"] }),
        Kind::Enum(values) => json!({ "type": "string", "enum": values }),
        Kind::Int => json!({ "type": "integer" }),
        Kind::Number => json!({ "type": "number" }),
        Kind::Bool => json!({ "type": "boolean" }),
        Kind::Object(fields) => object_schema(fields, &fields[..1].iter().map(|f| f.key).collect::<Vec<_>>()),
        Kind::Array(elem) => json!({ "type": "array", "items": kind_schema(*elem) }),
    }
}

/// Whether `v` violates `schema`, for the subset of JSON Schema the templates use (`type`,
/// `enum`, `properties`, `required`, `items`). The oracle uses a full validator; this one
/// only classifies generated cases. A tool schema of the generator's own ([`schema`]) is
/// checked against its keywords looked up once ([`Compiled`]); any other schema by
/// [`violates_by_lookup`] (which is also the tests' oracle of [`Compiled`]).
pub(crate) fn violates(schema: &Value, v: &Value) -> bool {
    match compiled(schema) {
        Some(c) => c.violates(v),
        None => violates_by_lookup(schema, v),
    }
}

/// The compiled form of `schema` if it is one of [`schema`]'s (by address: those are never
/// dropped, so an address names one of them for good).
pub(crate) fn compiled(s: &Value) -> Option<&'static Compiled<'static>> {
    static COMPILED: OnceLock<Vec<(&'static Value, Compiled<'static>)>> = OnceLock::new();
    COMPILED
        .get_or_init(|| {
            (0..TOOLS.len())
                .map(|t| {
                    let s: &'static Value = schema(t);
                    (s, Compiled::new(s))
                })
                .collect()
        })
        .iter()
        .find(|(tool, _)| std::ptr::eq(*tool, s))
        .map(|(_, c)| c)
}

/// A schema's keywords as [`violates_by_lookup`] reads them, looked up once: the schema walk
/// of a document costs a map lookup per keyword per value otherwise. (Also what the byte
/// walk of `crate::violates` reads.)
pub(crate) struct Compiled<'s> {
    /// The schema is an object (another checks nothing).
    pub object: bool,
    /// Whether `type` accepts a value of each [`class`] (all, without `type`).
    pub accepts: [bool; 7],
    /// `enum`, if it is an array.
    pub allowed: Option<&'s [Value]>,
    /// Every entry of `enum` is a string.
    pub enum_strings: bool,
    /// `required`'s strings, if it is an array, and its length (strings or not).
    pub required: Vec<&'s str>,
    pub required_len: usize,
    /// `properties`, if it is an object, in its order.
    pub properties: Vec<(&'s str, Compiled<'s>)>,
    pub items: Option<Box<Compiled<'s>>>,
}

/// What `type` tells values apart by: string, integer (as `type: integer` accepts it), other
/// number, boolean, null, object, array.
fn class(v: &Value) -> usize {
    match v {
        Value::String(_) => 0,
        Value::Number(_) if type_matches("integer", v) => 1,
        Value::Number(_) => 2,
        Value::Bool(_) => 3,
        Value::Null => 4,
        Value::Object(_) => 5,
        Value::Array(_) => 6,
    }
}

impl<'s> Compiled<'s> {
    pub fn new(schema: &'s Value) -> Compiled<'s> {
        let mut c = Compiled {
            object: false,
            accepts: [true; 7],
            allowed: None,
            enum_strings: false,
            required: Vec::new(),
            required_len: 0,
            properties: Vec::new(),
            items: None,
        };
        // A schema that is no object checks nothing.
        let Some(s) = schema.as_object() else { return c };
        c.object = true;
        if let Some(t) = s.get("type") {
            // One value of each class, as `type_matches` reads it.
            let samples = [json!(""), json!(1), json!(0.5), json!(true), Value::Null, json!({}), json!([])];
            for (k, v) in samples.iter().enumerate() {
                debug_assert_eq!(class(v), k);
                c.accepts[k] = match t {
                    Value::String(t) => type_matches(t, v),
                    Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| type_matches(t, v)),
                    _ => true,
                };
            }
        }
        if let Some(Value::Array(allowed)) = s.get("enum") {
            c.allowed = Some(allowed);
            c.enum_strings = allowed.iter().all(Value::is_string);
        }
        if let Some(Value::Array(req)) = s.get("required") {
            c.required = req.iter().filter_map(Value::as_str).collect();
            c.required_len = req.len();
        }
        if let Some(Value::Object(props)) = s.get("properties") {
            c.properties = props.iter().map(|(k, p)| (k.as_str(), Compiled::new(p))).collect();
        }
        c.items = s.get("items").map(|i| Box::new(Compiled::new(i)));
        c
    }

    /// Whether `type` refuses a value of class `k` (see [`class`]).
    pub fn refuses(&self, k: usize) -> bool {
        !self.accepts[k]
    }

    /// [`violates_by_lookup`] of the schema this was compiled from.
    fn violates(&self, v: &Value) -> bool {
        if !self.accepts[class(v)] {
            return true;
        }
        if let Some(allowed) = self.allowed {
            if !allowed.contains(v) {
                return true;
            }
        }
        match v {
            Value::Object(o) => {
                self.required.iter().any(|k| !o.contains_key(*k))
                    || (!self.properties.is_empty()
                        && o.iter().any(|(k, x)| {
                            self.properties.iter().find(|(p, _)| *p == k).is_some_and(|(_, p)| p.violates(x))
                        }))
            }
            Value::Array(items) => self.items.as_ref().is_some_and(|s| items.iter().any(|x| s.violates(x))),
            _ => false,
        }
    }
}

/// [`violates`], looking each keyword up in the schema's map.
fn violates_by_lookup(schema: &Value, v: &Value) -> bool {
    let Some(s) = schema.as_object() else { return false };
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => type_matches(t, v),
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| type_matches(t, v)),
            _ => true,
        };
        if !ok {
            return true;
        }
    }
    if let Some(Value::Array(allowed)) = s.get("enum") {
        if !allowed.contains(v) {
            return true;
        }
    }
    if let Value::Object(o) = v {
        if let Some(Value::Array(req)) = s.get("required") {
            if req.iter().filter_map(Value::as_str).any(|k| !o.contains_key(k)) {
                return true;
            }
        }
        if let Some(Value::Object(props)) = s.get("properties") {
            if o.iter().any(|(k, x)| props.get(k).is_some_and(|p| violates_by_lookup(p, x))) {
                return true;
            }
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (v, s.get("items")) {
        if items.iter().any(|x| violates_by_lookup(item_schema, x)) {
            return true;
        }
    }
    false
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => {
            v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiled tool schemas judge as the keyword lookups do: every value (and every value
    /// inside one) of the documents of generated cases, against every tool's schema, and
    /// values of every type.
    #[test]
    fn compiled_schemas_judge_as_the_lookups() {
        fn each<'v>(v: &'v Value, out: &mut Vec<&'v Value>) {
            out.push(v);
            match v {
                Value::Object(o) => o.values().for_each(|x| each(x, out)),
                Value::Array(a) => a.iter().for_each(|x| each(x, out)),
                _ => {}
            }
        }
        let cfg = crate::GenConfig { schema: true, ..crate::GenConfig::default() };
        let strategy = crate::case_strategy(&cfg);
        let mut docs: Vec<Value> = [
            json!(null),
            json!(1),
            json!(-3),
            json!(2.5),
            json!(1e300),
            json!(4.0),
            json!("x"),
            json!(true),
            json!([]),
            json!([1, "a", null]),
            json!({}),
            json!({"status": "open"}),
            json!({"status": "P1", "limit": 1.5}),
            json!({"title": null, "priority": "low"}),
        ]
        .into();
        for k in 0..1500 {
            let case = crate::strategy::generated_case(&strategy, 9, k, String::new());
            for call in case.streams.iter().flat_map(|t| t.calls()) {
                if let Ok(v) = serde_json::from_str::<Value>(&call.arguments) {
                    docs.push(v);
                }
            }
        }
        let mut values = Vec::new();
        for d in &docs {
            each(d, &mut values);
        }
        let (mut yes, mut no) = (0, 0);
        for t in 0..TOOLS.len() {
            let s: &Value = schema(t);
            let c = compiled(s).expect("a tool schema is compiled");
            for v in &values {
                let want = violates_by_lookup(s, v);
                assert_eq!(c.violates(v), want, "tool {t}: {v}");
                assert_eq!(violates(s, v), want, "tool {t}: {v}");
                if want {
                    yes += 1;
                } else {
                    no += 1;
                }
            }
        }
        assert!(yes > 1000 && no > 1000, "{yes} violating, {no} not");
        // Another schema, even an equal one, is looked up.
        let copy = schema(0).as_ref().clone();
        assert!(compiled(&copy).is_none());
    }

    /// A deep value is its levels, opened and closed one by one.
    #[test]
    fn deep_values_are_their_levels() {
        for depth in 128..288 {
            let mut want = String::new();
            for i in 0..depth {
                want.push_str(if i % 4 == 3 { "{\"n\": " } else { "[" });
            }
            want.push('1');
            for i in (0..depth).rev() {
                want.push(if i % 4 == 3 { '}' } else { ']' });
            }
            let mut got = String::from("{\"tree\": ");
            deep(&mut got, depth, Marks { resumes: &mut Vec::new(), start: 0, last: 0 });
            assert_eq!(got["{\"tree\": ".len()..], want);
        }
    }

    /// The key a long-key document gets is the one its pieces make.
    #[test]
    fn long_keys_are_their_pieces() {
        for form_arg in 0..=255usize {
            let mut key = String::new();
            while key.len() < 1024 + 24 * form_arg {
                key.push_str(["key_", "Mérida_", "\\u00e9", "東京", "x1"][key.len() % 5]);
            }
            assert_eq!(long_key(1024 + 24 * form_arg), key);
        }
    }

    #[test]
    fn numbers_are_written_as_format_writes_them() {
        for n in (0..3000).chain([9_999, 10_000, 123_456_789, usize::MAX]) {
            for width in [1, 2, 4] {
                let mut s = String::from("x");
                decimal(&mut s, n, width);
                assert_eq!(s, format!("x{n:0width$}"));
            }
        }
        for b in 0..=255u8 {
            let mut s = String::new();
            hex2(&mut s, b);
            assert_eq!(s, format!("{b:02x}"));
        }
    }

    #[test]
    fn schemas_accept_the_seed_examples_and_refuse_p1() {
        let ticket = schema(CREATE_TICKET);
        assert!(!violates(ticket, &json!({"title": "x", "priority": "urgent"})));
        assert!(violates(ticket, &json!({"title": "x", "priority": "P1"})));
        assert!(violates(ticket, &json!({"priority": "low"})));
        let search = schema(1);
        assert!(violates(search, &json!({"status": "open", "limit": "20"})));
        assert!(!violates(search, &json!({"status": "open", "limit": 20})));
        assert!(!violates(schema(GET_TIME), &json!({})));
    }
}
