//! The per-byte lexer `lex` replaced (a `match` per byte over tokens and expectations), kept
//! as the tests' oracle: every answer of the table-driven lexer is held to this one. And
//! ([`former`]) coverage's observing scan as it was before it read tokens in loops of their
//! own, the oracle of the one that does.

/// Per-offset flags; offset `s` describes the cut between byte `s - 1` and byte `s`.
pub(crate) mod flag {
    /// `s` is a UTF-8 character boundary.
    pub const BOUNDARY: u16 = 1;
    /// Strictly inside a string literal (opening quote consumed, closing one not).
    pub const IN_STRING: u16 = 1 << 1;
    /// Inside a string and a space of that string is on either side of the cut.
    pub const NEXT_TO_SPACE: u16 = 1 << 2;
    /// Right after the backslash of an escape.
    pub const ESCAPE: u16 = 1 << 3;
    /// Inside `\uXXXX`: after the `u`, before the last hex digit.
    pub const UNICODE: u16 = 1 << 4;
    /// Inside an object nested in the top-level value.
    pub const NESTED: u16 = 1 << 5;
    /// After a key's closing quote, before its colon.
    pub const KEY_COLON: u16 = 1 << 6;
    /// Right after the `}` that closes the first top-level value, with no error before:
    /// the prefix is a whole JSON document.
    pub const PREFIX_PARSES: u16 = 1 << 7;
    /// Inside a string that is a value, not a key.
    pub const IN_VALUE_STRING: u16 = 1 << 8;
}

pub(crate) use super::Status;

pub(crate) struct Scan {
    /// `flags[s]` for `s` in `0..=len`.
    pub flags: Vec<u16>,
    pub status: Status,
    /// Byte ranges of the top-level object's keys (their raw, escaped text).
    pub top_keys: Vec<std::ops::Range<usize>>,
    /// The most containers open at once (before any lexical error).
    pub deepest: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// A value (top level, after a colon, after a comma in an array).
    Value,
    /// First key of an object, or `}`.
    KeyOrEnd,
    /// A key after a comma.
    Key,
    Colon,
    /// `,` or the closing bracket of the innermost container.
    CommaOrEnd,
    /// First value of an array, or `]`.
    ValueOrEnd,
    /// The top-level value is complete.
    Done,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

impl Num {
    fn accepting(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::ExpDigits)
    }

    fn step(self, b: u8) -> Option<Num> {
        use Num::*;
        Some(match (self, b) {
            (Minus, b'0') => Zero,
            (Minus, b'1'..=b'9') => Int,
            (Int, b'0'..=b'9') => Int,
            (Zero | Int, b'.') => Dot,
            (Dot | Frac, b'0'..=b'9') => Frac,
            (Zero | Int | Frac, b'e' | b'E') => Exp,
            (Exp, b'+' | b'-') => ExpSign,
            (Exp | ExpSign | ExpDigits, b'0'..=b'9') => ExpDigits,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Token {
    None,
    Str { key: bool },
    Escape { key: bool },
    Unicode { key: bool, digits: u8 },
    Number(Num),
    Literal { rest: &'static [u8] },
}

/// The open containers: a bit per level for the first 64 (no allocation for any document a
/// model writes), a vector beyond.
#[derive(Default)]
struct Stack {
    bits: u64,
    depth: usize,
    deep: Vec<Container>,
    /// The greatest `depth` reached.
    deepest: usize,
}

impl Stack {
    fn len(&self) -> usize {
        self.depth
    }

    fn is_empty(&self) -> bool {
        self.depth == 0
    }

    fn push(&mut self, c: Container) {
        if self.depth < 64 {
            let bit = 1u64 << self.depth;
            if c == Container::Object {
                self.bits |= bit;
            } else {
                self.bits &= !bit;
            }
        } else {
            self.deep.push(c);
        }
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
    }

    fn last(&self) -> Option<Container> {
        match self.depth {
            0 => None,
            d if d <= 64 => {
                Some(if self.bits >> (d - 1) & 1 == 1 { Container::Object } else { Container::Array })
            }
            _ => self.deep.last().copied(),
        }
    }

    fn pop(&mut self) {
        if self.depth > 64 {
            self.deep.pop();
        }
        self.depth = self.depth.saturating_sub(1);
    }
}

struct Lexer {
    stack: Stack,
    /// Objects on the stack below the top-level container.
    nested: u32,
    expect: Expect,
    token: Token,
    error: bool,
    values_done: u32,
    key_start: usize,
}

impl Lexer {
    #[inline(always)]
    fn flags_here(&self, bytes: &[u8], s: usize) -> u16 {
        if self.error {
            return 0;
        }
        let mut f = if self.nested > 0 { flag::NESTED } else { 0 };
        match self.token {
            Token::None => match self.expect {
                Expect::Colon => f |= flag::KEY_COLON,
                Expect::Done if self.values_done == 1 && s > 0 && bytes[s - 1] == b'}' => {
                    f |= flag::PREFIX_PARSES
                }
                _ => {}
            },
            Token::Str { key } | Token::Escape { key } | Token::Unicode { key, .. } => {
                f |= flag::IN_STRING;
                if !key {
                    f |= flag::IN_VALUE_STRING;
                }
                // A space on either side of the cut is string content: the opening quote is
                // before `s - 1` when byte `s - 1` is a space, and the closing quote is a `"`.
                let before = s > 0 && bytes[s - 1] == b' ';
                let after = bytes.get(s) == Some(&b' ') && matches!(self.token, Token::Str { .. });
                if before || after {
                    f |= flag::NEXT_TO_SPACE;
                }
                match self.token {
                    Token::Escape { .. } => f |= flag::ESCAPE,
                    Token::Unicode { digits, .. } if digits < 4 => f |= flag::UNICODE,
                    _ => {}
                }
            }
            Token::Number(_) | Token::Literal { .. } => {}
        }
        f
    }

    /// A value has ended: update what the enclosing container expects.
    fn value_done(&mut self) {
        if self.stack.is_empty() {
            self.expect = Expect::Done;
            self.values_done += 1;
        } else {
            self.expect = Expect::CommaOrEnd;
        }
    }

    fn start_value(&mut self, b: u8) {
        match b {
            b'{' => {
                if !self.stack.is_empty() {
                    self.nested += 1;
                }
                self.stack.push(Container::Object);
                self.expect = Expect::KeyOrEnd;
            }
            b'[' => {
                self.stack.push(Container::Array);
                self.expect = Expect::ValueOrEnd;
            }
            b'"' => self.token = Token::Str { key: false },
            b'-' => self.token = Token::Number(Num::Minus),
            b'0' => self.token = Token::Number(Num::Zero),
            b'1'..=b'9' => self.token = Token::Number(Num::Int),
            b't' => self.token = Token::Literal { rest: b"rue" },
            b'f' => self.token = Token::Literal { rest: b"alse" },
            b'n' => self.token = Token::Literal { rest: b"ull" },
            _ => self.error = true,
        }
    }

    fn close(&mut self, c: Container) {
        if self.stack.last() == Some(c) {
            self.stack.pop();
            if c == Container::Object && !self.stack.is_empty() {
                self.nested -= 1;
            }
            self.value_done();
        } else {
            self.error = true;
        }
    }

    /// Consumes byte `i`.
    #[inline(always)]
    fn step(&mut self, bytes: &[u8], i: usize, top_keys: &mut Option<Vec<std::ops::Range<usize>>>) {
        let b = bytes[i];
        match self.token {
            Token::Str { key } => {
                match b {
                    b'"' => {
                        self.token = Token::None;
                        if key {
                            if self.stack.len() == 1 {
                                if let Some(keys) = top_keys {
                                    keys.push(self.key_start..i);
                                }
                            }
                            self.expect = Expect::Colon;
                        } else {
                            self.value_done();
                        }
                    }
                    b'\\' => self.token = Token::Escape { key },
                    0..=0x1f => self.error = true,
                    _ => {}
                }
                return;
            }
            Token::Escape { key } => {
                match b {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.token = Token::Str { key },
                    b'u' => self.token = Token::Unicode { key, digits: 0 },
                    _ => self.error = true,
                }
                return;
            }
            Token::Unicode { key, digits } => {
                if b.is_ascii_hexdigit() {
                    self.token = if digits == 3 {
                        Token::Str { key }
                    } else {
                        Token::Unicode { key, digits: digits + 1 }
                    };
                } else {
                    self.error = true;
                }
                return;
            }
            Token::Literal { rest } => {
                if rest.first() == Some(&b) {
                    if rest.len() == 1 {
                        self.token = Token::None;
                        self.value_done();
                    } else {
                        self.token = Token::Literal { rest: &rest[1..] };
                    }
                } else {
                    self.error = true;
                }
                return;
            }
            Token::Number(n) => match n.step(b) {
                Some(next) => {
                    self.token = Token::Number(next);
                    return;
                }
                None if n.accepting() => {
                    // The number ends here; the byte belongs to what follows.
                    self.token = Token::None;
                    self.value_done();
                }
                None => {
                    self.error = true;
                    return;
                }
            },
            Token::None => {}
        }
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            return;
        }
        match self.expect {
            Expect::Value => self.start_value(b),
            Expect::ValueOrEnd => {
                if b == b']' {
                    self.close(Container::Array);
                } else {
                    self.start_value(b);
                }
            }
            Expect::KeyOrEnd | Expect::Key => {
                if b == b'"' {
                    self.token = Token::Str { key: true };
                    self.key_start = i + 1;
                } else if b == b'}' && self.expect == Expect::KeyOrEnd {
                    self.close(Container::Object);
                } else {
                    self.error = true;
                }
            }
            Expect::Colon => {
                if b == b':' {
                    self.expect = Expect::Value;
                } else {
                    self.error = true;
                }
            }
            Expect::CommaOrEnd => match (b, self.stack.last()) {
                (b',', Some(Container::Object)) => self.expect = Expect::Key,
                (b',', Some(Container::Array)) => self.expect = Expect::Value,
                (b'}', _) => self.close(Container::Object),
                (b']', _) => self.close(Container::Array),
                _ => self.error = true,
            },
            Expect::Done => {
                // A second document end to end: lex it too (its splits are still worth
                // classifying), but the whole is not one document.
                self.values_done += 1;
                self.expect = Expect::Value;
                self.start_value(b);
            }
        }
    }
}

/// The length of the plain string content at the start of `bytes`: up to the first quote,
/// backslash or control character. Sixteen bytes at a time, so the test vectorizes.
fn string_run(bytes: &[u8]) -> usize {
    let special = |b: u8| (b == b'"') | (b == b'\\') | (b < 0x20);
    let mut n = 0;
    for chunk in bytes.chunks(16) {
        if chunk.iter().fold(false, |a, &b| a | special(b)) {
            return n + chunk.iter().position(|&b| special(b)).unwrap_or(chunk.len());
        }
        n += chunk.len();
    }
    n
}

/// Scans `doc` once, recording the top-level keys; see the module docs.
pub(crate) fn scan_with_keys(doc: &str) -> Scan {
    let mut sink = Every(Vec::with_capacity(doc.len() + 1));
    let (status, top_keys, deepest) = scan_impl(doc, true, &mut sink);
    Scan { flags: sink.0, status, top_keys, deepest }
}

/// [`scan_with_keys`] that keeps the flags of the offsets `at` only (sorted, each in
/// `0..=len`): `flags[n]` is the flags of offset `at[n]`. What coverage needs of a document,
/// without a flag per byte (the one pass over the bytes is the same).
pub(crate) fn scan_at(doc: &str, at: &[usize]) -> Scan {
    debug_assert!(at.windows(2).all(|w| w[0] <= w[1]) && at.last().is_none_or(|&s| s <= doc.len()));
    let mut sink = Only { at, next: 0, flags: Vec::with_capacity(at.len()) };
    let (status, top_keys, deepest) = scan_impl(doc, true, &mut sink);
    Scan { flags: sink.flags, status, top_keys, deepest }
}

/// Where the scan puts the flags of each offset.
trait Sink {
    /// Whether the flags of offset `s` are wanted (offsets come in increasing order).
    fn wants(&self, s: usize) -> bool;
    fn put(&mut self, s: usize, f: u16);
    /// Offsets `i..end` of plain string content, `base` their common flags.
    fn string_run(&mut self, bytes: &[u8], i: usize, end: usize, base: u16);
    /// Offsets `i..len` past a lexical error: only the boundary flag.
    fn after_error(&mut self, bytes: &[u8], i: usize);
    /// Nothing more is wanted: the scan may stop (its status is then meaningless).
    #[inline(always)]
    fn done(&self) -> bool {
        false
    }
}

/// Every offset's flags.
struct Every(Vec<u16>);

/// `s` is a char boundary unless byte `s` continues a multi-byte character.
fn boundary(b: u8) -> u16 {
    if (b as i8) >= -0x40 {
        flag::BOUNDARY
    } else {
        0
    }
}

impl Sink for Every {
    #[inline(always)]
    fn wants(&self, _: usize) -> bool {
        true
    }

    #[inline(always)]
    fn put(&mut self, _: usize, f: u16) {
        self.0.push(f);
    }

    fn string_run(&mut self, bytes: &[u8], i: usize, end: usize, base: u16) {
        // Branch-free per byte (it vectorizes); in a string, byte `j - 1` is the opening
        // quote or content.
        let flags = &mut self.0;
        let at = flags.len();
        flags.resize(at + (end - i), 0);
        for ((f, &b), &prev) in flags[at..].iter_mut().zip(&bytes[i..end]).zip(&bytes[i - 1..end - 1]) {
            *f = base
                | (u16::from((b as i8) >= -0x40) * flag::BOUNDARY)
                | (u16::from((b == b' ') | (prev == b' ')) * flag::NEXT_TO_SPACE);
        }
    }

    fn after_error(&mut self, bytes: &[u8], i: usize) {
        self.0.extend(bytes[i..].iter().map(|&b| boundary(b)));
    }
}

/// The flags of a few offsets.
struct Only<'a> {
    at: &'a [usize],
    next: usize,
    flags: Vec<u16>,
}

impl Only<'_> {
    /// Puts `f(s)` for every wanted offset `s` below `end`.
    #[inline(always)]
    fn each_below(&mut self, end: usize, f: impl Fn(usize) -> u16) {
        while let Some(&s) = self.at.get(self.next).filter(|&&s| s < end) {
            self.flags.push(f(s));
            self.next += 1;
        }
    }
}

impl Sink for Only<'_> {
    #[inline(always)]
    fn wants(&self, s: usize) -> bool {
        self.at.get(self.next) == Some(&s)
    }

    #[inline(always)]
    fn put(&mut self, s: usize, f: u16) {
        // Duplicated offsets get the same flags.
        self.each_below(s + 1, |_| f);
    }

    fn string_run(&mut self, bytes: &[u8], i: usize, end: usize, base: u16) {
        self.each_below(end, |s| {
            let (b, prev) = (bytes[s], bytes[s - 1]);
            base | (u16::from((b as i8) >= -0x40) * flag::BOUNDARY)
                | (u16::from((b == b' ') | (prev == b' ')) * flag::NEXT_TO_SPACE)
        });
        debug_assert!(self.at.get(self.next).is_none_or(|&s| s >= end) && i <= end);
    }

    fn after_error(&mut self, bytes: &[u8], _: usize) {
        self.each_below(bytes.len(), |s| boundary(bytes[s]));
    }
}

/// For each `(f, fraction)`: the first interior offset (`1..len`) carrying `f` and the
/// boundary flag at or after `fraction`/256 of the way through `doc`, wrapping around to the
/// first one before that point; `None` if no offset carries them (or `doc` is shorter than two
/// bytes). What `scan(doc).flags` says of those offsets, in one pass that keeps no flag per
/// byte and stops once every question has its answer after its point.
pub(crate) fn first_flagged(doc: &str, questions: &[(u16, u8)]) -> Vec<Option<usize>> {
    let len = doc.len();
    if len < 2 {
        return vec![None; questions.len()];
    }
    // A question no offset can answer (its class needs a byte the document lacks) is settled
    // here: left open, it would keep the pass going to the end of the document.
    let possible: Vec<bool> = questions.iter().map(|&(f, _)| may_carry(doc.as_bytes(), f)).collect();
    let mut sink = Questions {
        len,
        open: possible.iter().filter(|&&p| p).count(),
        qs: questions
            .iter()
            .zip(&possible)
            .filter(|(_, &p)| p)
            .map(|(&(f, fraction), _)| Question {
                want: f | flag::BOUNDARY,
                start: 1 + usize::from(fraction) * (len - 1) / 256,
                after: None,
                before: None,
            })
            .collect(),
        classes: 0,
    };
    sink.settle_classes();
    if sink.open > 0 {
        scan_impl(doc, false, &mut sink);
    }
    let mut answers = sink.qs.iter().map(|q| q.after.or(q.before));
    possible.iter().map(|&p| if p { answers.next().flatten() } else { None }).collect()
}

/// Whether some offset of `doc` may carry `f`, from a byte search (`false` only when none
/// can): an escape needs a backslash, `\uXXXX` a backslash before a `u`, a space next to the
/// cut a space, an object nested in the top-level value a `{` other than the top-level
/// value's own first byte.
fn may_carry(doc: &[u8], f: u16) -> bool {
    match f {
        flag::ESCAPE => memchr::memchr(b'\\', doc).is_some(),
        flag::UNICODE => memchr::memmem::find(doc, b"\\u").is_some(),
        flag::NEXT_TO_SPACE => memchr::memchr(b' ', doc).is_some(),
        flag::NESTED => {
            // (A `{` at the first byte opens the top-level value, or is an error: nothing nests.)
            let first = doc.iter().position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r'));
            first.is_some_and(|first| memchr::memchr(b'{', &doc[first + 1..]).is_some())
        }
        _ => true,
    }
}

/// One question of [`first_flagged`]: offsets carrying all of `want`, the first at or after
/// `start` and the first before it.
struct Question {
    want: u16,
    start: usize,
    after: Option<usize>,
    before: Option<usize>,
}

impl Question {
    /// Offset `s` carries `want`.
    #[inline(always)]
    fn hit(&mut self, s: usize) -> bool {
        if s >= self.start {
            self.after = Some(s);
            true
        } else {
            self.before.get_or_insert(s);
            false
        }
    }
}

/// The sink of [`first_flagged`].
struct Questions {
    len: usize,
    /// Questions without their answer at or after their start.
    open: usize,
    qs: Vec<Question>,
    /// The flags some open question wants besides the boundary (all of them if one wants
    /// the boundary alone): an offset with none of them answers nothing.
    classes: u16,
}

impl Questions {
    fn settle_classes(&mut self) {
        self.classes = self.qs.iter().filter(|q| q.after.is_none()).fold(0, |m, q| {
            m | match q.want & !flag::BOUNDARY {
                0 => u16::MAX,
                c => c,
            }
        });
    }
}

impl Sink for Questions {
    #[inline(always)]
    fn wants(&self, s: usize) -> bool {
        s > 0 && s < self.len
    }

    #[inline(always)]
    fn put(&mut self, s: usize, f: u16) {
        if s == 0 || s >= self.len || f & self.classes == 0 {
            return;
        }
        let open = self.open;
        for q in self.qs.iter_mut().filter(|q| q.after.is_none()) {
            if f & q.want == q.want && q.hit(s) {
                self.open -= 1;
            }
        }
        if self.open != open {
            self.settle_classes();
        }
    }

    fn string_run(&mut self, bytes: &[u8], i: usize, end: usize, base: u16) {
        // As `Every::string_run` flags them: `base`, the boundary, and NEXT_TO_SPACE where
        // byte `s` or byte `s - 1` is a space (such an offset is always a boundary: a space
        // is followed by no continuation byte).
        let end = end.min(self.len);
        let open = self.open;
        for q in self.qs.iter_mut().filter(|q| q.after.is_none()) {
            let need = q.want & !base;
            if need & !(flag::BOUNDARY | flag::NEXT_TO_SPACE) != 0 {
                continue;
            }
            let hit = |s: usize| {
                if need & flag::NEXT_TO_SPACE != 0 {
                    bytes[s] == b' ' || bytes[s - 1] == b' '
                } else {
                    need & flag::BOUNDARY == 0 || (bytes[s] as i8) >= -0x40
                }
            };
            let from = i.max(1);
            if q.before.is_none() {
                if let Some(s) = (from..end.min(q.start)).find(|&s| hit(s)) {
                    q.before = Some(s);
                }
            }
            if let Some(s) = (from.max(q.start)..end).find(|&s| hit(s)) {
                q.after = Some(s);
                self.open -= 1;
            }
        }
        if self.open != open {
            self.settle_classes();
        }
    }

    fn after_error(&mut self, bytes: &[u8], i: usize) {
        // Only the boundary flag: only a question for the boundary alone is answered here.
        if !self.qs.iter().any(|q| q.after.is_none() && q.want == flag::BOUNDARY) {
            return;
        }
        let from = i.max(1);
        for (s, &b) in bytes.iter().enumerate().take(self.len).skip(from) {
            if self.open == 0 {
                return;
            }
            self.put(s, boundary(b));
        }
    }

    #[inline(always)]
    fn done(&self) -> bool {
        self.open == 0
    }
}

fn scan_impl(doc: &str, keys: bool, sink: &mut impl Sink) -> (Status, Vec<std::ops::Range<usize>>, usize) {
    let bytes = doc.as_bytes();
    let mut top_keys = keys.then(Vec::new);
    let mut lx = Lexer {
        stack: Stack::default(),
        nested: 0,
        expect: Expect::Value,
        token: Token::None,
        error: false,
        values_done: 0,
        key_start: 0,
    };
    let len = bytes.len();
    let mut started = false;
    let mut i = 0;
    while i < len {
        if sink.done() {
            break;
        }
        if lx.error {
            // Past an error nothing is classified.
            sink.after_error(bytes, i);
            break;
        }
        if let Token::Str { key } = lx.token {
            // Fast path over plain string content (most of a document's bytes): the flags
            // are the string's, plus the boundary and the spaces around the cut.
            let mut base = flag::IN_STRING;
            if !key {
                base |= flag::IN_VALUE_STRING;
            }
            if lx.nested > 0 {
                base |= flag::NESTED;
            }
            let end = i + string_run(&bytes[i..]);
            sink.string_run(bytes, i, end, base);
            i = end;
            if i == len {
                break;
            }
        }
        if sink.wants(i) {
            sink.put(i, lx.flags_here(bytes, i) | boundary(bytes[i]));
        }
        if !matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r') {
            started = true;
        }
        lx.step(bytes, i, &mut top_keys);
        i += 1;
    }
    // A number at the very end is complete once the input is.
    if let Token::Number(n) = lx.token {
        if n.accepting() && !lx.error {
            lx.token = Token::None;
            lx.value_done();
        }
    }
    if sink.wants(len) {
        sink.put(len, lx.flags_here(bytes, len) | flag::BOUNDARY);
    }
    let status = if !started {
        Status::Empty
    } else if lx.error || lx.values_done > 1 {
        Status::Invalid
    } else if lx.expect == Expect::Done {
        Status::Valid
    } else {
        Status::Incomplete
    };
    (status, top_keys.unwrap_or_default(), lx.stack.deepest)
}

/// `lex::scan_observed_into` as it was before it took the stretches between tokens and the
/// non-ASCII runs of strings at once: the oracle of the new one (the same flags, status,
/// keys, depth and observations).
pub(crate) mod former {
    use super::super::*;

    /// The scan of `scan_at` (the flags of the offsets `at` only, sorted, each in `0..=len`:
    /// `flags[n]` is the flags of offset `at[n]`; the status, the top-level keys, the depth),
    /// telling `obs` what it meets (see [`Observer`]). Its own copy of the scan loop (the
    /// builder's [`first_flagged`] pays nothing for the observing): string runs stop at non-ASCII
    /// bytes too, each state change is looked at for numbers and escapes, and a whole escape or a
    /// run of digits with no wanted offset inside is taken at once. `flags` and `keys` (emptied
    /// first) are the vectors of an earlier [`Scan`], so that a run of documents allocates them
    /// once.
    pub(crate) fn scan_observed_into(
        doc: &str,
        at: &[usize],
        obs: &mut impl Observer,
        mut flags: Vec<u16>,
        mut keys: Vec<std::ops::Range<usize>>,
    ) -> Scan {
        debug_assert!(at.windows(2).all(|w| w[0] <= w[1]) && at.last().is_none_or(|&s| s <= doc.len()));
        let next_at = at.first().copied().unwrap_or(usize::MAX);
        flags.clear();
        flags.reserve(at.len());
        keys.clear();
        let mut sink = Only { at, next: 0, next_at, flags };
        let bytes = doc.as_bytes();
        let mut top_keys = Some(keys);
        let mut lx =
            Lexer { state: st::VALUE, stack: Stack::default(), nested: 0, values_done: 0, key_start: 0 };
        let len = bytes.len();
        let is_number = |s: u8| (st::MINUS..=st::EXP_DIGITS).contains(&s);
        let mut number_start = 0;
        // The string's last escape was a high surrogate: only a low one may come next.
        let mut high = false;
        let mut i = 0;
        while i < len {
            let state = lx.state;
            if state | 1 == st::STR_VAL {
                let base = STATE_FLAGS[state as usize] | if lx.nested > 0 { flag::NESTED } else { 0 };
                let end = i + ascii_string_run(&bytes[i..]);
                if end > i {
                    if std::mem::take(&mut high) {
                        obs.lone_surrogate();
                    }
                    sink.string_run(bytes, i, end, base);
                    i = end;
                    if i == len {
                        break;
                    }
                }
                if bytes[i] == b'\\' {
                    // A whole escape at once where no offset inside it is wanted (`\uXXXX` would
                    // take six steps).
                    let hex = bytes.get(i + 2..i + 6).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
                    match (bytes.get(i + 1), hex) {
                        (Some(b'u'), Some(h)) if sink.next_at >= i + 6 => {
                            let v = h.iter().fold(0, |v, &b| v << 4 | hex_value(b));
                            unicode_escape(v, &mut high, obs);
                            i += 6;
                            continue;
                        }
                        (Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't'), _)
                            if sink.next_at >= i + 2 =>
                        {
                            if std::mem::take(&mut high) {
                                obs.lone_surrogate();
                            }
                            obs.other_escape();
                            i += 2;
                            continue;
                        }
                        _ => {}
                    }
                }
                if bytes[i] >= 0x80 {
                    // Plain content as well, a character at a time.
                    let c =
                        doc[i..].chars().next().expect("a character starts at a non-ASCII byte after ASCII");
                    if std::mem::take(&mut high) {
                        obs.lone_surrogate();
                    }
                    obs.non_ascii(c);
                    let end = i + c.len_utf8();
                    sink.string_run(bytes, i, end, base);
                    i = end;
                    continue;
                }
            } else if state == st::ERROR {
                sink.after_error(bytes, i);
                break;
            } else if matches!(state, st::INT | st::FRAC | st::EXP_DIGITS) && bytes[i].is_ascii_digit() {
                // More digits keep the state: at once, where no offset among them is wanted.
                let end = bytes[i..].iter().position(|b| !b.is_ascii_digit()).map_or(len, |n| i + n);
                if sink.next_at >= end {
                    i = end;
                    continue;
                }
            }
            if sink.wants(i, lx.may_flags()) {
                sink.put(i, lx.flags_here(bytes, i) | boundary(bytes[i]));
            }
            lx.step(bytes, i, &mut top_keys);
            let new = lx.state;
            if new != state {
                if is_number(new) {
                    if !is_number(state) {
                        number_start = i;
                    }
                } else if is_number(state) {
                    obs.number(&doc[number_start..i]);
                }
                // (Only a string's states end in an escape or a quote.)
                if st::is_string(state) {
                    match state {
                        // A string's closing quote or an error (the escape after a high half may be
                        // its low one).
                        st::STR_KEY | st::STR_VAL
                            if !matches!(new, st::ESC_KEY | st::ESC_VAL) && std::mem::take(&mut high) =>
                        {
                            obs.lone_surrogate()
                        }
                        st::ESC_KEY | st::ESC_VAL if new == st::STR_KEY || new == st::STR_VAL => {
                            if std::mem::take(&mut high) {
                                obs.lone_surrogate();
                            }
                            obs.other_escape();
                        }
                        s if (s == st::UNI_KEY + 3 || s == st::UNI_VAL + 3) && new != st::ERROR => {
                            let v = bytes[i - 3..=i].iter().fold(0, |v, &b| v << 4 | hex_value(b));
                            unicode_escape(v, &mut high, obs);
                        }
                        _ => {}
                    }
                }
            }
            i += 1;
        }
        if is_number(lx.state) {
            obs.number(&doc[number_start..len]);
        }
        if high {
            obs.lone_surrogate();
        }
        // A number at the very end is complete once the input is.
        if st::accepting(lx.state) {
            lx.value_done();
        }
        if sink.wants(len, lx.may_flags()) {
            sink.put(len, lx.flags_here(bytes, len) | flag::BOUNDARY);
        }
        let status = if lx.state == st::ERROR || lx.values_done > 1 {
            Status::Invalid
        } else if lx.state == st::VALUE && lx.values_done == 0 && lx.stack.is_empty() {
            Status::Empty
        } else if lx.state == st::DONE {
            Status::Valid
        } else {
            Status::Incomplete
        };
        Scan {
            flags: sink.flags,
            status,
            top_keys: top_keys.unwrap_or_default(),
            deepest: lx.stack.deepest,
            top_values: Vec::new(),
        }
    }

    /// [`string_run`] that stops at non-ASCII bytes too.
    pub(crate) fn ascii_string_run(bytes: &[u8]) -> usize {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
        let mut n = 0;
        while let Some(word) = bytes.get(n..n + 8) {
            let x = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            // (A high byte matches exactly; borrows set bits only above a byte that matched.)
            let mask = zero(x ^ (ONES * u64::from(b'"')))
                | zero(x ^ (ONES * u64::from(b'\\')))
                | (x.wrapping_sub(ONES * 0x20) & !x & HIGH)
                | (x & HIGH);
            if mask != 0 {
                return n + (mask.trailing_zeros() / 8) as usize;
            }
            n += 8;
        }
        n + bytes[n..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b))
            .unwrap_or(bytes.len() - n)
    }
}
