//! A small JSON lexer that says what every byte offset of an argument document lands in.
//!
//! Split points are byte offsets; what makes one adversarial is the lexical context it cuts
//! (inside a string next to a space, between `\` and the escaped character, inside `\uXXXX`,
//! inside a nested object, between a key and its colon, right after a closing brace whose
//! prefix already parses). One pass over a document gives that context for each offset
//! `0..=len`, kept as the caller needs it: the builder asks [`first_flagged`] where an offset
//! of a chosen class is, to place splits there on purpose (the pass stops once it knows), and
//! [`crate::coverage`] asks [`scan_observed_into`] about the splits of any case, whoever made it
//! (and about the numbers, escapes and characters it meets on the way).
//!
//! The lexer follows RFC 8259 closely (number grammar, escapes, control characters) but is
//! not the judge of validity: the oracle parses with serde_json, and so does the coverage
//! classifier wherever validity matters.
//!
//! A step is a lookup: the state (expectation and token in one byte) and the byte's class
//! index [`NEXT`], whose entries are the next state or one of a few actions (the stack, the
//! keys, a number's end); the flags of an offset come from its state by table too. The
//! tests hold its answers to serde_json's strict parse and to a plain recursive descent
//! written from RFC 8259 and the definitions below.

use toolcert_schema::document::bytes::next_special;

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

/// What the whole document is, as far as the lexer can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// No bytes, or only whitespace.
    Empty,
    /// One whole value, optionally surrounded by whitespace.
    Valid,
    /// A proper prefix of a value: it ends mid-value with no error before (a cut document).
    Incomplete,
    /// A lexical error, or more than one top-level value.
    Invalid,
}

pub(crate) struct Scan {
    /// `flags[s]` for `s` in `0..=len`.
    pub flags: Vec<u16>,
    pub status: Status,
    /// Byte ranges of the top-level object's keys (their raw, escaped text).
    pub top_keys: Vec<std::ops::Range<usize>>,
    /// The most containers open at once (before any lexical error).
    pub deepest: usize,
    /// The containers that are values of the top-level container, in order: from the opening
    /// bracket to past the closing one (only [`scan_observed_into`] measures them; the schema
    /// walk skips them at once).
    pub top_values: Vec<std::ops::Range<usize>>,
}

/// The lexer's states: what the next byte may be (outside tokens) or where in a token it is.
/// One byte names both the expectation and the token, so a step is a lookup in [`NEXT`].
mod st {
    /// A value (top level, after a colon, after a comma in an array).
    pub const VALUE: u8 = 0;
    /// First value of an array, or `]`.
    pub const VALUE_OR_END: u8 = 1;
    /// First key of an object, or `}`.
    pub const KEY_OR_END: u8 = 2;
    /// A key after a comma.
    pub const KEY: u8 = 3;
    pub const COLON: u8 = 4;
    /// `,` or `}` in an object; `,` or `]` in an array.
    pub const COMMA_OBJ: u8 = 5;
    pub const COMMA_ARR: u8 = 6;
    /// The top-level value is complete.
    pub const DONE: u8 = 7;
    pub const STR_KEY: u8 = 8;
    pub const STR_VAL: u8 = 9;
    /// After the backslash (of a key's string, a value's).
    pub const ESC_KEY: u8 = 10;
    pub const ESC_VAL: u8 = 11;
    /// `\uXXXX` with 0 to 3 hex digits read: `UNI_KEY + digits`, `UNI_VAL + digits`.
    pub const UNI_KEY: u8 = 12;
    pub const UNI_VAL: u8 = 16;
    pub const MINUS: u8 = 20;
    pub const ZERO: u8 = 21;
    pub const INT: u8 = 22;
    pub const DOT: u8 = 23;
    pub const FRAC: u8 = 24;
    pub const EXP: u8 = 25;
    pub const EXP_SIGN: u8 = 26;
    pub const EXP_DIGITS: u8 = 27;
    /// Inside `true`, `false`, `null`: the byte named is the one expected next.
    pub const T_R: u8 = 28;
    pub const T_U: u8 = 29;
    pub const T_E: u8 = 30;
    pub const F_A: u8 = 31;
    pub const F_L: u8 = 32;
    pub const F_S: u8 = 33;
    pub const F_E: u8 = 34;
    pub const N_U: u8 = 35;
    pub const N_L: u8 = 36;
    pub const N_L2: u8 = 37;
    /// A lexical error: nothing after it is classified.
    pub const ERROR: u8 = 38;
    pub const COUNT: usize = 39;

    pub const fn is_string(s: u8) -> bool {
        s >= STR_KEY && s < MINUS
    }

    pub const fn is_key_string(s: u8) -> bool {
        matches!(s, STR_KEY | ESC_KEY) || (s >= UNI_KEY && s < UNI_VAL)
    }

    /// A number that may end here.
    pub const fn accepting(s: u8) -> bool {
        matches!(s, ZERO | INT | FRAC | EXP_DIGITS)
    }
}

/// What a step does besides entering a state: the entries of [`NEXT`] from 64 up.
mod act {
    /// `{`: push an object.
    pub const PUSH_OBJ: u8 = 64;
    /// `[`: push an array.
    pub const PUSH_ARR: u8 = 65;
    /// `}` or `]` (the table only closes the container that is open).
    pub const CLOSE: u8 = 66;
    /// A key's opening quote.
    pub const KEY_OPEN: u8 = 67;
    /// A key's closing quote.
    pub const KEY_CLOSE: u8 = 68;
    /// A value's last byte (a string's closing quote, a literal's last letter).
    pub const VALUE_DONE: u8 = 69;
    /// A byte after a complete number: the number ends, the byte is what follows.
    pub const NUM_END: u8 = 70;
    /// A byte after the top-level value: a second document starts with it.
    pub const SECOND_DOC: u8 = 71;
}

/// Byte classes: bytes of one class step every state alike.
mod class {
    pub const OTHER: u8 = 0;
    pub const SPACE: u8 = 1;
    /// `\t`, `\n`, `\r`: whitespace between tokens, an error in a string.
    pub const WS_CTRL: u8 = 2;
    pub const CTRL: u8 = 3;
    pub const QUOTE: u8 = 4;
    pub const BACKSLASH: u8 = 5;
    pub const SLASH: u8 = 6;
    pub const LBRACE: u8 = 7;
    pub const RBRACE: u8 = 8;
    pub const LBRACKET: u8 = 9;
    pub const RBRACKET: u8 = 10;
    pub const COLON: u8 = 11;
    pub const COMMA: u8 = 12;
    pub const MINUS: u8 = 13;
    pub const PLUS: u8 = 14;
    pub const ZERO: u8 = 15;
    pub const DIGIT: u8 = 16;
    pub const DOT: u8 = 17;
    pub const A: u8 = 18;
    pub const B: u8 = 19;
    /// `c`, `d`, `A`..`D`, `F`: hex digits only.
    pub const HEX: u8 = 20;
    pub const E_LOWER: u8 = 21;
    pub const E_UPPER: u8 = 22;
    pub const F: u8 = 23;
    pub const L: u8 = 24;
    pub const N: u8 = 25;
    pub const R: u8 = 26;
    pub const S: u8 = 27;
    pub const T: u8 = 28;
    pub const U: u8 = 29;
    /// The columns of [`super::NEXT`]: a power of two, so a row is found by a shift.
    pub const COUNT: usize = 32;

    pub const fn of(b: u8) -> u8 {
        match b {
            b' ' => SPACE,
            b'\t' | b'\n' | b'\r' => WS_CTRL,
            0..=0x1f => CTRL,
            b'"' => QUOTE,
            b'\\' => BACKSLASH,
            b'/' => SLASH,
            b'{' => LBRACE,
            b'}' => RBRACE,
            b'[' => LBRACKET,
            b']' => RBRACKET,
            b':' => COLON,
            b',' => COMMA,
            b'-' => MINUS,
            b'+' => PLUS,
            b'0' => ZERO,
            b'1'..=b'9' => DIGIT,
            b'.' => DOT,
            b'a' => A,
            b'b' => B,
            b'c' | b'd' | b'A'..=b'D' | b'F' => HEX,
            b'e' => E_LOWER,
            b'E' => E_UPPER,
            b'f' => F,
            b'l' => L,
            b'n' => N,
            b'r' => R,
            b's' => S,
            b't' => T,
            b'u' => U,
            _ => OTHER,
        }
    }

    pub const fn is_hex(c: u8) -> bool {
        matches!(c, ZERO | DIGIT | A | B | HEX | E_LOWER | E_UPPER | F)
    }

    pub const fn is_digit(c: u8) -> bool {
        matches!(c, ZERO | DIGIT)
    }
}

/// The class of every byte.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = class::of(b as u8);
        b += 1;
    }
    t
};

/// Where a value starting with a byte of class `c` leads.
const fn start_value(c: u8) -> u8 {
    match c {
        class::LBRACE => act::PUSH_OBJ,
        class::LBRACKET => act::PUSH_ARR,
        class::QUOTE => st::STR_VAL,
        class::MINUS => st::MINUS,
        class::ZERO => st::ZERO,
        class::DIGIT => st::INT,
        class::T => st::T_R,
        class::F => st::F_A,
        class::N => st::N_U,
        _ => st::ERROR,
    }
}

/// The step from state `s` on a byte of class `c`: a state, or an action of [`act`].
const fn next(s: u8, c: u8) -> u8 {
    use st::*;
    let ws = matches!(c, class::SPACE | class::WS_CTRL);
    match s {
        VALUE..=DONE if ws => s,
        VALUE => start_value(c),
        VALUE_OR_END => match c {
            class::RBRACKET => act::CLOSE,
            _ => start_value(c),
        },
        KEY_OR_END | KEY => match c {
            class::QUOTE => act::KEY_OPEN,
            class::RBRACE if s == KEY_OR_END => act::CLOSE,
            _ => ERROR,
        },
        st::COLON => match c {
            class::COLON => VALUE,
            _ => ERROR,
        },
        COMMA_OBJ => match c {
            class::COMMA => KEY,
            class::RBRACE => act::CLOSE,
            _ => ERROR,
        },
        COMMA_ARR => match c {
            class::COMMA => VALUE,
            class::RBRACKET => act::CLOSE,
            _ => ERROR,
        },
        DONE => act::SECOND_DOC,
        STR_KEY | STR_VAL => match c {
            class::QUOTE if s == STR_KEY => act::KEY_CLOSE,
            class::QUOTE => act::VALUE_DONE,
            class::BACKSLASH => s + (ESC_KEY - STR_KEY),
            class::CTRL | class::WS_CTRL => ERROR,
            _ => s,
        },
        ESC_KEY | ESC_VAL => match c {
            class::QUOTE
            | class::BACKSLASH
            | class::SLASH
            | class::B
            | class::F
            | class::N
            | class::R
            | class::T => s - (ESC_KEY - STR_KEY),
            class::U if s == ESC_KEY => UNI_KEY,
            class::U => UNI_VAL,
            _ => ERROR,
        },
        UNI_KEY..=19 => {
            let (base, string) = if s < UNI_VAL { (UNI_KEY, STR_KEY) } else { (UNI_VAL, STR_VAL) };
            if !class::is_hex(c) {
                ERROR
            } else if s - base == 3 {
                string
            } else {
                s + 1
            }
        }
        MINUS..=EXP_DIGITS => {
            let n = match (s, c) {
                (MINUS, class::ZERO) => ZERO,
                (MINUS, class::DIGIT) => INT,
                (INT, _) if class::is_digit(c) => INT,
                (ZERO | INT, class::DOT) => DOT,
                (DOT | FRAC, _) if class::is_digit(c) => FRAC,
                (ZERO | INT | FRAC, class::E_LOWER | class::E_UPPER) => EXP,
                (EXP, class::PLUS | class::MINUS) => EXP_SIGN,
                (EXP | EXP_SIGN | EXP_DIGITS, _) if class::is_digit(c) => EXP_DIGITS,
                _ => ERROR,
            };
            if n == ERROR && accepting(s) {
                act::NUM_END
            } else {
                n
            }
        }
        T_R..=N_L2 => {
            let (want, then) = match s {
                T_R => (class::R, T_U),
                T_U => (class::U, T_E),
                T_E => (class::E_LOWER, act::VALUE_DONE),
                F_A => (class::A, F_L),
                F_L => (class::L, F_S),
                F_S => (class::S, F_E),
                F_E => (class::E_LOWER, act::VALUE_DONE),
                N_U => (class::U, N_L),
                N_L => (class::L, N_L2),
                _ => (class::L, act::VALUE_DONE),
            };
            if c == want {
                then
            } else {
                ERROR
            }
        }
        _ => ERROR,
    }
}

/// [`next`] for every state and class.
static NEXT: [[u8; class::COUNT]; st::COUNT] = {
    let mut t = [[0u8; class::COUNT]; st::COUNT];
    let mut s = 0;
    while s < st::COUNT {
        let mut c = 0;
        while c < class::COUNT {
            t[s][c] = next(s as u8, c as u8);
            c += 1;
        }
        s += 1;
    }
    t
};

/// [`NEXT`] by byte rather than class, for the states between tokens (`VALUE..=DONE`): one
/// lookup less a byte in [`scan_observed_into`]'s loop between tokens.
static STEP: [[u8; 256]; st::DONE as usize + 1] = {
    let mut t = [[0u8; 256]; st::DONE as usize + 1];
    let mut s = 0;
    while s <= st::DONE as usize {
        let mut b = 0;
        while b < 256 {
            t[s][b] = NEXT[s][CLASS[b] as usize];
            b += 1;
        }
        s += 1;
    }
    t
};

/// The flags a state gives the offsets in it (before the nesting, the spaces and the brace
/// that closes the document, which also depend on the bytes and the stack).
static STATE_FLAGS: [u16; st::COUNT] = {
    let mut t = [0u16; st::COUNT];
    let mut s = 0;
    while s < st::COUNT {
        let q = s as u8;
        let mut f = 0;
        if q == st::COLON {
            f |= flag::KEY_COLON;
        }
        if st::is_string(q) {
            f |= flag::IN_STRING;
            if !st::is_key_string(q) {
                f |= flag::IN_VALUE_STRING;
            }
        }
        if q == st::ESC_KEY || q == st::ESC_VAL {
            f |= flag::ESCAPE;
        }
        if q >= st::UNI_KEY && q < st::MINUS {
            f |= flag::UNICODE;
        }
        t[s] = f;
        s += 1;
    }
    t
};

/// The flags an offset in a state may carry besides the boundary: [`STATE_FLAGS`], the
/// space next to the cut in a string, the closing brace after the top-level value (and the
/// nesting, which any state but the error may carry).
static MAY_FLAGS: [u16; st::COUNT] = {
    let mut t = [0u16; st::COUNT];
    let mut s = 0;
    while s < st::COUNT {
        let q = s as u8;
        t[s] = STATE_FLAGS[s]
            | if st::is_string(q) { flag::NEXT_TO_SPACE } else { 0 }
            | if q == st::DONE { flag::PREFIX_PARSES } else { 0 };
        s += 1;
    }
    t
};

/// The open containers: a bit per level for the first 64 (no allocation for any document a
/// model writes), a vector beyond.
#[derive(Default)]
struct Stack {
    /// Bit `d` set: level `d` is an object.
    bits: u64,
    depth: usize,
    /// Levels from 64 up: `true` for an object.
    deep: Vec<bool>,
    /// The greatest `depth` reached.
    deepest: usize,
}

impl Stack {
    fn is_empty(&self) -> bool {
        self.depth == 0
    }

    fn push(&mut self, object: bool) {
        if self.depth < 64 {
            let bit = 1u64 << self.depth;
            if object {
                self.bits |= bit;
            } else {
                self.bits &= !bit;
            }
        } else {
            self.deep.push(object);
        }
        self.depth += 1;
        self.deepest = self.deepest.max(self.depth);
    }

    /// The innermost container is an object (the stack is not empty).
    fn top_is_object(&self) -> bool {
        match self.depth {
            d if d <= 64 => self.bits >> (d - 1) & 1 == 1,
            _ => self.deep.last() == Some(&true),
        }
    }

    fn pop(&mut self) {
        if self.depth > 64 {
            self.deep.pop();
        }
        self.depth -= 1;
    }
}

struct Lexer {
    state: u8,
    stack: Stack,
    /// Objects on the stack below the top-level container.
    nested: u32,
    values_done: u32,
    key_start: usize,
}

impl Lexer {
    /// The flags of offset `s` (`s - 1` consumed, not `s`), but the boundary.
    #[inline(always)]
    fn flags_here(&self, bytes: &[u8], s: usize) -> u16 {
        let state = self.state;
        if state == st::ERROR {
            return 0;
        }
        let mut f = STATE_FLAGS[state as usize] | if self.nested > 0 { flag::NESTED } else { 0 };
        if st::is_string(state) {
            // A space on either side of the cut is string content: the opening quote is
            // before `s - 1` when byte `s - 1` is a space, and the closing quote is a `"`.
            let before = s > 0 && bytes[s - 1] == b' ';
            let after = bytes.get(s) == Some(&b' ') && (state == st::STR_KEY || state == st::STR_VAL);
            if before || after {
                f |= flag::NEXT_TO_SPACE;
            }
        } else if state == st::DONE && self.values_done == 1 && s > 0 && bytes[s - 1] == b'}' {
            f |= flag::PREFIX_PARSES;
        }
        f
    }

    /// What offsets in the current state may carry (see [`MAY_FLAGS`]), the boundary included.
    #[inline(always)]
    fn may_flags(&self) -> u16 {
        MAY_FLAGS[self.state as usize] | flag::NESTED | flag::BOUNDARY
    }

    /// A value has ended: the state is what the enclosing container expects.
    #[inline(always)]
    fn value_done(&mut self) {
        self.state = if self.stack.is_empty() {
            self.values_done += 1;
            st::DONE
        } else if self.stack.top_is_object() {
            st::COMMA_OBJ
        } else {
            st::COMMA_ARR
        };
    }

    /// Consumes byte `i`.
    #[inline(always)]
    fn step(&mut self, bytes: &[u8], i: usize, top_keys: &mut Option<Vec<std::ops::Range<usize>>>) {
        let c = CLASS[bytes[i] as usize];
        let t = NEXT[self.state as usize][c as usize];
        if t < act::PUSH_OBJ {
            self.state = t;
        } else {
            self.act(t, c, i, top_keys);
        }
    }

    #[inline(always)]
    fn act(&mut self, mut t: u8, c: u8, i: usize, top_keys: &mut Option<Vec<std::ops::Range<usize>>>) {
        loop {
            match t {
                act::PUSH_OBJ => {
                    if !self.stack.is_empty() {
                        self.nested += 1;
                    }
                    self.stack.push(true);
                    self.state = st::KEY_OR_END;
                }
                act::PUSH_ARR => {
                    self.stack.push(false);
                    self.state = st::VALUE_OR_END;
                }
                act::CLOSE => {
                    let object = self.stack.top_is_object();
                    self.stack.pop();
                    if object && !self.stack.is_empty() {
                        self.nested -= 1;
                    }
                    self.value_done();
                }
                act::KEY_OPEN => {
                    self.key_start = i + 1;
                    self.state = st::STR_KEY;
                }
                act::KEY_CLOSE => {
                    if self.stack.depth == 1 {
                        if let Some(keys) = top_keys {
                            keys.push(self.key_start..i);
                        }
                    }
                    self.state = st::COLON;
                }
                act::VALUE_DONE => self.value_done(),
                act::NUM_END | act::SECOND_DOC => {
                    // The byte belongs to what follows: step it again from there.
                    if t == act::NUM_END {
                        self.value_done();
                    } else {
                        // A second document end to end: lex it too (its splits are still
                        // worth classifying), but the whole is not one document.
                        self.values_done += 1;
                        self.state = st::VALUE;
                    }
                    t = NEXT[self.state as usize][c as usize];
                    if t < act::PUSH_OBJ {
                        self.state = t;
                        return;
                    }
                    continue;
                }
                _ => self.state = t,
            }
            return;
        }
    }
}
/// The flags of every offset of `doc` (`flags[s]` for `s` in `0..=len`), with the status, the
/// top-level keys and the depth: [`scan_observed_into`] asked about every offset. (The builder
/// asks [`first_flagged`] and coverage a few offsets: a flag per byte is for the tests.)
#[cfg(test)]
pub(crate) fn scan(doc: &str) -> Scan {
    scan_at(doc, &(0..=doc.len()).collect::<Vec<_>>())
}

/// [`scan`] that keeps the flags of the offsets `at` only (sorted, each in
/// `0..=len`): `flags[n]` is the flags of offset `at[n]`. What coverage needs of a document,
/// without a flag per byte (the one pass over the bytes is the same).
#[cfg(test)]
pub(crate) fn scan_at(doc: &str, at: &[usize]) -> Scan {
    scan_observed(doc, at, &mut ())
}

/// What coverage reads of a document in the lexer's pass besides the flags: the tokens and
/// characters its labels are about, in document order, so that no second pass is needed.
/// Where they stop saying what a pass over the document's tokens would read, the scan calls
/// [`Observer::unreliable`], and the caller must not use them: after a lexical error (tokens
/// are cut where the lexer gave up), and where a top-level value follows a number or a
/// literal with no byte between that could end a token (`1true`, `0-1`: one token to such a
/// pass). Of several values end to end otherwise they are what it reads.
pub(crate) trait Observer {
    /// A number token outside strings; at the end of a cut document it may be cut too
    /// (`1.`, `-`).
    fn number(&mut self, text: &str);
    /// A whole `\uXXXX` escape of value `v`.
    fn unicode_escape(&mut self, v: u32);
    /// An escape other than `\u`.
    fn other_escape(&mut self);
    /// A non-ASCII character of a string.
    fn non_ascii(&mut self, c: char);
    /// Plain content of a string with a non-ASCII character: [`Observer::non_ascii`] of each
    /// (an observer may tell more cheaply which of them matter).
    fn text(&mut self, s: &str) {
        for c in s.chars().filter(|c| !c.is_ascii()) {
            self.non_ascii(c);
        }
    }
    /// A surrogate escape that is not half of a pair: a high one not followed at once by a
    /// whole low one (in its string), or a low one not right after a high one.
    fn lone_surrogate(&mut self);
    /// The calls do not say what a token pass reads (see the trait's docs).
    fn unreliable(&mut self) {}
}

/// A top-level value starting at byte `j` is glued to the token before it: a pass that reads
/// runs of letters, digits and `+-.` as one token would not read them as the lexer did.
#[inline(never)]
fn glued(bytes: &[u8], j: usize) -> bool {
    let token = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.');
    j > 0 && bytes[j - 1].is_ascii_alphanumeric() && bytes.get(j).is_some_and(|&b| token(b))
}

/// Nothing observed.
impl Observer for () {
    fn number(&mut self, _: &str) {}
    fn unicode_escape(&mut self, _: u32) {}
    fn other_escape(&mut self) {}
    fn non_ascii(&mut self, _: char) {}
    fn lone_surrogate(&mut self) {}
}

/// The value of a hex digit (the lexer has checked it is one).
fn hex_value(b: u8) -> u32 {
    match b {
        b'0'..=b'9' => u32::from(b - b'0'),
        _ => u32::from((b | 0x20) - b'a' + 10),
    }
}

/// The value of each hex digit, `0xFF` for other bytes.
static HEX: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut b = 0;
    while b < 256 {
        if (b as u8).is_ascii_hexdigit() {
            t[b] = match b as u8 {
                c @ b'0'..=b'9' => c - b'0',
                c => (c | 0x20) - b'a' + 10,
            };
        }
        b += 1;
    }
    t
};

/// The value of the four hex digits at `bytes[i..]`, if they are four hex digits.
#[inline(always)]
fn hex4(bytes: &[u8], i: usize) -> Option<u32> {
    let h = bytes.get(i..i + 4)?;
    let d = [HEX[h[0] as usize], HEX[h[1] as usize], HEX[h[2] as usize], HEX[h[3] as usize]];
    ((d[0] | d[1] | d[2] | d[3]) < 16)
        .then(|| (u32::from(d[0]) << 12) | (u32::from(d[1]) << 8) | (u32::from(d[2]) << 4) | u32::from(d[3]))
}

/// [`scan_observed_into`] with new vectors.
#[cfg(test)]
pub(crate) fn scan_observed(doc: &str, at: &[usize], obs: &mut impl Observer) -> Scan {
    scan_observed_into(doc, at, obs, Default::default())
}

/// The scan of `scan_at` (the flags of the offsets `at` only, sorted, each in `0..=len`:
/// `flags[n]` is the flags of offset `at[n]`; the status, the top-level keys, the depth),
/// telling `obs` what it meets (see [`Observer`]). Its own copy of the scan loop (the
/// builder's [`first_flagged`] pays nothing for the observing), which takes at once what
/// no wanted offset cuts: the whitespace and structure between tokens (a lookup a byte, up
/// to the next wanted offset), a string's plain content (its non-ASCII characters handed
/// to [`Observer::text`] together), a whole escape, a run of digits. `spare` holds the
/// vectors of an earlier [`Scan`] (emptied first, so that a run of documents allocates them
/// once).
pub(crate) fn scan_observed_into(doc: &str, at: &[usize], obs: &mut impl Observer, spare: Spare) -> Scan {
    debug_assert!(at.windows(2).all(|w| w[0] <= w[1]) && at.last().is_none_or(|&s| s <= doc.len()));
    let next_at = at.first().copied().unwrap_or(usize::MAX);
    let Spare(mut flags, mut keys, mut top_values) = spare;
    flags.clear();
    flags.reserve(at.len());
    keys.clear();
    top_values.clear();
    // Where the value of the top-level container that is open began.
    let mut top_value_start = 0;
    let mut sink = Only { at, next: 0, next_at, flags };
    let bytes = doc.as_bytes();
    let mut top_keys = Some(keys);
    let mut lx = Lexer { state: st::VALUE, stack: Stack::default(), nested: 0, values_done: 0, key_start: 0 };
    let len = bytes.len();
    let is_number = |s: u8| (st::MINUS..=st::EXP_DIGITS).contains(&s);
    let mut number_start = 0;
    // The string's last escape was a high surrogate: only a low one may come next.
    let mut high = false;
    let mut i = 0;
    'bytes: while i < len {
        let state = lx.state;
        if state <= st::DONE && sink.next_at > i {
            // Between tokens: step byte after byte up to the next wanted offset, until a
            // token starts (or an error). A string is read here to its closing quote, a
            // literal at once, where no wanted offset is inside.
            let mut stop = sink.next_at.min(len);
            'between: loop {
                // Whitespace, colons and commas lead from one state between tokens to another:
                // a lookup a byte. (`& 7`: the state is one of `VALUE..=DONE` here; no bounds
                // check.)
                let mut s = lx.state & 7;
                let mut t = STEP[s as usize][bytes[i] as usize];
                while t <= st::DONE {
                    s = t;
                    i += 1;
                    if i == stop {
                        lx.state = s;
                        break 'between;
                    }
                    t = STEP[(s & 7) as usize][bytes[i] as usize];
                }
                lx.state = s;
                i += 1;
                if t == st::STR_VAL || t == act::KEY_OPEN {
                    // (No high surrogate is pending outside strings.)
                    debug_assert!(!high);
                    let key = t == act::KEY_OPEN;
                    lx.state = if key { st::STR_KEY } else { st::STR_VAL };
                    lx.key_start = i;
                    let base = STATE_FLAGS[lx.state as usize] | if lx.nested > 0 { flag::NESTED } else { 0 };
                    let (n, non_ascii) = content_run(&bytes[i..]);
                    let end = i + n;
                    if non_ascii {
                        obs.text(&doc[i..end]);
                    }
                    if bytes.get(end) != Some(&b'"') {
                        // An escape, an error or the end: the string's own path reads on.
                        sink.string_run(bytes, i, end, base);
                        i = end;
                        break;
                    }
                    // The offset before the closing quote is the string's too.
                    sink.string_run(bytes, i, end + 1, base);
                    if !key {
                        lx.value_done();
                    } else {
                        if lx.stack.depth == 1 {
                            if let Some(keys) = &mut top_keys {
                                keys.push(i..end);
                            }
                        }
                        lx.state = st::COLON;
                    }
                    i = end + 1;
                    stop = sink.next_at.min(len);
                    if i >= stop {
                        break;
                    }
                    continue;
                }
                match t {
                    _ if t < act::PUSH_OBJ => lx.state = t,
                    act::PUSH_OBJ => {
                        if !lx.stack.is_empty() {
                            lx.nested += 1;
                        }
                        lx.stack.push(true);
                        lx.state = st::KEY_OR_END;
                        if lx.stack.depth == 2 {
                            top_value_start = i - 1;
                        }
                    }
                    act::PUSH_ARR => {
                        lx.stack.push(false);
                        lx.state = st::VALUE_OR_END;
                        if lx.stack.depth == 2 {
                            top_value_start = i - 1;
                        }
                    }
                    _ => {
                        if t == act::SECOND_DOC && glued(bytes, i - 1) {
                            obs.unreliable();
                        }
                        let depth = lx.stack.depth;
                        lx.act(t, CLASS[bytes[i - 1] as usize], i - 1, &mut top_keys);
                        if depth == 2 && lx.stack.depth == 1 {
                            top_values.push(top_value_start..i);
                        }
                    }
                }
                if is_number(lx.state) {
                    // A number: its bytes here too, up to the wanted offset.
                    let start = i - 1;
                    loop {
                        if i == stop {
                            number_start = start;
                            break 'between;
                        }
                        if matches!(lx.state, st::INT | st::FRAC | st::EXP_DIGITS) {
                            // More digits keep the state.
                            i += bytes[i..stop].iter().position(|b| !b.is_ascii_digit()).unwrap_or(stop - i);
                            if i == stop {
                                number_start = start;
                                break 'between;
                            }
                        }
                        let t = NEXT[lx.state as usize][CLASS[bytes[i] as usize] as usize];
                        if is_number(t) {
                            lx.state = t;
                            i += 1;
                            continue;
                        }
                        if t == act::NUM_END && lx.stack.is_empty() {
                            // (What follows a top-level number may start another one: the
                            // scan's own step tells.)
                            number_start = start;
                            break 'between;
                        }
                        obs.number(&doc[start..i]);
                        if t == act::NUM_END {
                            // The byte after it is stepped from what follows the value.
                            lx.value_done();
                            continue 'between;
                        }
                        lx.state = t;
                        i += 1;
                        break 'between;
                    }
                }
                if lx.state > st::DONE || i == stop {
                    if matches!(lx.state, st::T_R | st::F_A | st::N_U) {
                        let rest: &[u8] = match lx.state {
                            st::T_R => b"rue",
                            st::F_A => b"alse",
                            _ => b"ull",
                        };
                        if sink.next_at >= i + rest.len() && bytes[i..].starts_with(rest) {
                            i += rest.len();
                            lx.value_done();
                            if i < stop {
                                continue;
                            }
                        }
                    }
                    break;
                }
            }
            continue;
        }
        if state | 1 == st::STR_VAL {
            // The string's plain runs and the whole escapes between them (no offset inside
            // them wanted), up to its closing quote, or to a byte the step below takes.
            let base = STATE_FLAGS[state as usize] | if lx.nested > 0 { flag::NESTED } else { 0 };
            loop {
                let (n, non_ascii) = content_run(&bytes[i..]);
                if n > 0 {
                    let end = i + n;
                    if std::mem::take(&mut high) {
                        obs.lone_surrogate();
                    }
                    if non_ascii {
                        // (The run ends at an ASCII byte or at the end: whole characters.)
                        obs.text(&doc[i..end]);
                    }
                    sink.string_run(bytes, i, end, base);
                    i = end;
                }
                match bytes.get(i) {
                    None => break 'bytes,
                    Some(b'"') if sink.next_at > i => {
                        // The closing quote.
                        if std::mem::take(&mut high) {
                            obs.lone_surrogate();
                        }
                        lx.step(bytes, i, &mut top_keys);
                        i += 1;
                        continue 'bytes;
                    }
                    // A whole escape at once where no offset inside it is wanted (`\uXXXX`
                    // would take six steps).
                    Some(b'\\') => match bytes.get(i + 1) {
                        Some(b'u') if sink.next_at >= i + 6 => {
                            if let Some(v) = hex4(bytes, i + 2) {
                                unicode_escape(v, &mut high, obs);
                                i += 6;
                                continue;
                            }
                        }
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
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
                    },
                    _ => {}
                }
                break;
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
        let (values_done, depth) = (lx.values_done, lx.stack.depth);
        lx.step(bytes, i, &mut top_keys);
        if lx.values_done > values_done.max(1) && glued(bytes, i) {
            // (A number's end and the next value's start, `00`, may come in one step.)
            obs.unreliable();
        }
        if lx.stack.depth != depth {
            if lx.stack.depth == 2 && depth == 1 {
                top_value_start = i;
            } else if depth == 2 && lx.stack.depth == 1 {
                top_values.push(top_value_start..i + 1);
            }
        }
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
    if lx.state == st::ERROR {
        obs.unreliable();
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
        top_values,
    }
}

/// The vectors of a [`Scan`] that is done with, for [`scan_observed_into`] to fill again.
#[derive(Default)]
pub(crate) struct Spare(Vec<u16>, Vec<std::ops::Range<usize>>, Vec<std::ops::Range<usize>>);

impl From<Scan> for Spare {
    fn from(s: Scan) -> Spare {
        Spare(s.flags, s.top_keys, s.top_values)
    }
}

/// The length of the plain string content at the start of `bytes` (up to the first quote,
/// backslash or control character: [`next_special`]), and whether it has a non-ASCII byte.
#[inline(always)]
fn content_run(bytes: &[u8]) -> (usize, bool) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut seen = 0;
    let mut n = 0;
    while let Some(word) = bytes.get(n..n + 8) {
        let x = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let mask = zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\')))
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGH);
        if mask != 0 {
            // The bits up to the first match's top bit (which is exact; the special byte
            // itself is ASCII).
            let upto = mask ^ mask.wrapping_sub(1);
            return (n + (mask.trailing_zeros() / 8) as usize, (seen | (x & upto)) & HIGH != 0);
        }
        seen |= x;
        n += 8;
    }
    let rest = &bytes[n..];
    let k = rest.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).unwrap_or(rest.len());
    (n + k, seen & HIGH != 0 || rest[..k].iter().any(|&b| b >= 0x80))
}

/// A whole `\uXXXX` escape of value `v` for `obs`; `high`: the string's last escape was a
/// high surrogate.
#[inline(always)]
fn unicode_escape(v: u32, high: &mut bool, obs: &mut impl Observer) {
    match v {
        0xD800..=0xDBFF => {
            if *high {
                obs.lone_surrogate();
            }
            *high = true;
        }
        0xDC00..=0xDFFF => {
            if !std::mem::take(high) {
                obs.lone_surrogate();
            }
        }
        _ => {
            if std::mem::take(high) {
                obs.lone_surrogate();
            }
        }
    }
    obs.unicode_escape(v);
}

/// Where the scan puts the flags of each offset.
trait Sink {
    /// Whether the flags of offset `s` are wanted (offsets come in increasing order), `may`
    /// the flags it may carry.
    fn wants(&self, s: usize, may: u16) -> bool;
    fn put(&mut self, s: usize, f: u16);
    /// Offsets `i..end` of plain string content, `base` their common flags.
    fn string_run(&mut self, bytes: &[u8], i: usize, end: usize, base: u16);
    /// Whether [`Sink::string_run`] may want anything of a run with flags `base` (a cheap
    /// test before the call).
    #[inline(always)]
    fn wants_run(&self, _base: u16) -> bool {
        true
    }
    /// Offsets `i..len` past a lexical error: only the boundary flag.
    fn after_error(&mut self, bytes: &[u8], i: usize);
    /// Nothing more is wanted: the scan may stop (its status is then meaningless).
    #[inline(always)]
    fn done(&self) -> bool {
        false
    }
}

/// `s` is a char boundary unless byte `s` continues a multi-byte character.
fn boundary(b: u8) -> u16 {
    if (b as i8) >= -0x40 {
        flag::BOUNDARY
    } else {
        0
    }
}

/// The flags of a few offsets.
struct Only<'a> {
    at: &'a [usize],
    next: usize,
    /// `at[next]`, or `usize::MAX` past the last (one compare per byte asks for it).
    next_at: usize,
    flags: Vec<u16>,
}

impl Only<'_> {
    /// Puts `f(s)` for every wanted offset `s` below `end`.
    #[inline(always)]
    fn each_below(&mut self, end: usize, f: impl Fn(usize) -> u16) {
        while self.next_at < end {
            self.flags.push(f(self.next_at));
            self.next += 1;
            self.next_at = self.at.get(self.next).copied().unwrap_or(usize::MAX);
        }
    }
}

impl Sink for Only<'_> {
    #[inline(always)]
    fn wants(&self, s: usize, _: u16) -> bool {
        self.next_at == s
    }

    #[inline(always)]
    fn put(&mut self, s: usize, f: u16) {
        // Duplicated offsets get the same flags.
        self.each_below(s + 1, |_| f);
    }

    #[inline(always)]
    fn string_run(&mut self, bytes: &[u8], i: usize, end: usize, base: u16) {
        self.each_below(end, |s| {
            let (b, prev) = (bytes[s], bytes[s - 1]);
            base | (u16::from((b as i8) >= -0x40) * flag::BOUNDARY)
                | (u16::from((b == b' ') | (prev == b' ')) * flag::NEXT_TO_SPACE)
        });
        debug_assert!(self.next_at >= end && i <= end);
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
///
/// `resumes` are lexer states the renderer vouches for (sorted by offset, see [`Resume`]): with
/// some, each question is answered from the last one at or before its point (a huge document
/// is lexed from near the point, not from its first byte).
pub(crate) fn first_flagged(doc: &str, questions: &[(u16, u8)], resumes: &[Resume]) -> Vec<Option<usize>> {
    let mut answers = vec![None; questions.len()];
    first_flagged_into(doc, questions, resumes, &mut answers);
    answers
}

/// [`first_flagged`] into `answers` (one per question), allocating nothing.
pub(crate) fn first_flagged_into(
    doc: &str,
    questions: &[(u16, u8)],
    resumes: &[Resume],
    answers: &mut [Option<usize>],
) {
    debug_assert_eq!(questions.len(), answers.len());
    answers.fill(None);
    let bytes = doc.as_bytes();
    let len = bytes.len();
    if len < 2 {
        return;
    }
    if !resumes.is_empty() {
        for (&q, a) in questions.iter().zip(answers.iter_mut()) {
            *a = first_flagged_resuming(doc, q, resumes);
        }
        return;
    }
    // An answer does not depend on the other questions: a pass per `MAX_QUESTIONS` of them.
    for (questions, answers) in questions.chunks(MAX_QUESTIONS).zip(answers.chunks_mut(MAX_QUESTIONS)) {
        let mut sink = Questions::new(len);
        let mut slot = [0; MAX_QUESTIONS];
        // Past this offset no question can change its answer.
        let mut last = 0;
        for (k, &(f, fraction)) in questions.iter().enumerate() {
            // A question no offset can answer (its class needs a byte the document lacks) is
            // settled here: left open, it would keep the pass going to the end of the document.
            // One that no offset past some point can answer is settled there.
            if let Some(carrier) = last_carrier(bytes, f) {
                let start = 1 + usize::from(fraction) * (len - 1) / 256;
                slot[sink.n] = k;
                sink.ask(f, start);
                last = last.max(carrier).max(start - 1);
            }
        }
        if sink.open > 0 {
            lex_from(bytes, Resume::START.lexer(), 0, len.min(last + 1), &mut sink);
        }
        for (q, &k) in sink.qs[..sink.n].iter().zip(&slot) {
            answers[k] = q.after.or(q.before);
        }
    }
}

/// A lexer state at an offset of a document, known to whoever wrote the document: the
/// renderer records them in and after a huge field or a deep value (`doc::render`), where
/// nothing before can have been a lexical error. Offsets `at..` lexed from this state get the flags a pass from
/// the first byte gives them (the tests hold every recorded one to that pass). `span` is
/// what offsets from `at` to the next point may carry (any flag after the last point).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resume {
    at: usize,
    kind: ResumeKind,
    span: u16,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ResumeKind {
    /// Nothing read yet.
    Start,
    /// Inside a value string (in no escape) of an object that is a field of the top-level
    /// object; up to the next point, in that string or just after it.
    NestedString,
    /// After a comma in an array that is a field of the top-level object (where an element
    /// starts), no object open below the top-level one; up to the next point, in that array.
    ArrayElement,
    /// Right after the value of a field of the top-level object.
    AfterField,
    /// In a field's value nested as `doc::render` nests its deep documents (arrays, every
    /// fourth level an object `{"n": …}`), this many levels open: after a level's opening
    /// (`[`, or `{"n": `), or after a level's close.
    DeepOpen(u16),
    DeepClose(u16),
}

impl Resume {
    /// The first byte.
    const START: Resume = Resume { at: 0, kind: ResumeKind::Start, span: u16::MAX };

    /// See [`ResumeKind::NestedString`]: the offsets up to the next point are string content,
    /// its closing quote and the nested object's end.
    pub(crate) fn nested_string(at: usize) -> Resume {
        let span = flag::BOUNDARY
            | flag::IN_STRING
            | flag::IN_VALUE_STRING
            | flag::NEXT_TO_SPACE
            | flag::ESCAPE
            | flag::UNICODE
            | flag::NESTED;
        Resume { at, kind: ResumeKind::NestedString, span }
    }

    /// See [`ResumeKind::ArrayElement`]: inside the array, the top-level value is not done.
    pub(crate) fn array_element(at: usize) -> Resume {
        Resume { at, kind: ResumeKind::ArrayElement, span: !flag::PREFIX_PARSES }
    }

    /// See [`ResumeKind::DeepOpen`]: up to the next point, offsets in the nesting, whose only
    /// strings are the keys `"n"` (nothing but a key, its colon, the nesting and the boundary).
    pub(crate) fn deep_open(at: usize, levels: u16) -> Resume {
        Resume { at, kind: ResumeKind::DeepOpen(levels), span: Resume::DEEP_SPAN }
    }

    /// See [`ResumeKind::DeepClose`] (`levels` > 0: the last close is [`Resume::after_field`]).
    pub(crate) fn deep_close(at: usize, levels: u16) -> Resume {
        Resume { at, kind: ResumeKind::DeepClose(levels), span: Resume::DEEP_SPAN }
    }

    const DEEP_SPAN: u16 = flag::BOUNDARY | flag::IN_STRING | flag::KEY_COLON | flag::NESTED;

    /// See [`ResumeKind::AfterField`].
    pub(crate) fn after_field(at: usize) -> Resume {
        Resume { at, kind: ResumeKind::AfterField, span: u16::MAX }
    }

    pub(crate) fn at(self) -> usize {
        self.at
    }

    /// The lexer as a pass from the first byte leaves it at [`Resume::at`].
    fn lexer(self) -> Lexer {
        // Level 0 is the top-level object; level 1 the field's object or array.
        let (state, bits, depth, nested) = match self.kind {
            ResumeKind::Start => (st::VALUE, 0, 0, 0),
            ResumeKind::NestedString => (st::STR_VAL, 0b11, 2, 1),
            ResumeKind::ArrayElement => (st::VALUE, 0b01, 2, 0),
            ResumeKind::AfterField => (st::COMMA_OBJ, 0b01, 1, 0),
            ResumeKind::DeepOpen(levels) | ResumeKind::DeepClose(levels) => {
                // Stack level `d` > 0 is the nesting's level `d - 1`, an object every fourth.
                let depth = 1 + usize::from(levels);
                let object = |d: usize| d == 0 || (d - 1) % 4 == 3;
                let bits = (0..depth.min(64)).filter(|&d| object(d)).fold(0u64, |b, d| b | 1 << d);
                let deep = (64..depth).map(object).collect();
                let top = object(depth - 1);
                let state = match (self.kind, top) {
                    (ResumeKind::DeepOpen(_), true) => st::VALUE,
                    (ResumeKind::DeepOpen(_), false) => st::VALUE_OR_END,
                    (_, true) => st::COMMA_OBJ,
                    (_, false) => st::COMMA_ARR,
                };
                let stack = Stack { bits, depth, deep, deepest: depth };
                return Lexer { state, stack, nested: u32::from(levels / 4), values_done: 0, key_start: 0 };
            }
        };
        let stack = Stack { bits, depth, deep: Vec::new(), deepest: depth };
        Lexer { state, stack, nested, values_done: 0, key_start: 0 }
    }
}

/// [`first_flagged`] of one question: lexed from the last resume point at or before its
/// start, past the points whose span cannot carry the flag; the first offset before the
/// start (when none is after it) from the first byte, up to where the points say there is
/// none.
fn first_flagged_resuming(doc: &str, (f, fraction): (u16, u8), resumes: &[Resume]) -> Option<usize> {
    let bytes = doc.as_bytes();
    let len = bytes.len();
    let carrier = last_carrier(bytes, f)?;
    let start = 1 + usize::from(fraction) * (len - 1) / 256;
    // Point 0 is the first byte; the renderer's follow.
    let point = |k: usize| if k == 0 { Resume::START } else { resumes[k - 1] };
    let points = 1 + resumes.len();
    let lacks = |k: usize| f & !point(k).span != 0;
    let ask = |from: usize, start: usize, end: usize| {
        let mut sink = Questions::new(end);
        sink.ask(f, start);
        let p = point(from);
        lex_from(bytes, p.lexer(), p.at, end, &mut sink);
        (sink.qs[0].after, sink.qs[0].before)
    };
    // The last point at or before the start (point 0 is at 0).
    let i = resumes.partition_point(|r| r.at <= start);
    let mut j = i;
    while j < points && lacks(j) {
        j += 1;
    }
    // (Only a pass from `i` itself sees offsets before the start.)
    // (No offset past `carrier` carries the flag.)
    let (after, before) =
        if j < points { ask(j, start, len.min(carrier.max(start - 1) + 1)) } else { (None, None) };
    if after.is_some() {
        return after;
    }
    let mut k = i;
    while k > 0 && lacks(k - 1) {
        k -= 1;
    }
    // Nothing from point `k` to the start: the first offset of all is before `k`, or the
    // pass from `i` saw it.
    let end = point(k).at;
    if end > 0 {
        if let (Some(s), _) = ask(0, 1, end) {
            return Some(s);
        }
    }
    before
}

/// The lexer's loop over bytes `i..end` from the state
/// `lx` (a [`Resume`] point), for a sink that stops the pass once it is done; what it says of
/// the document as a whole is not kept. An offset is put to the sink only in a state whose
/// offsets may carry what an open question wants ([`Questions::wanted_states`]): most bytes
/// cost a lookup of the next state and a bit test.
fn lex_from(bytes: &[u8], mut lx: Lexer, mut i: usize, end: usize, sink: &mut Questions) {
    debug_assert!(end <= sink.len);
    let mut top_keys = None;
    let mut open = sink.open;
    let [mut plain, mut nested] = sink.wanted_states();
    while i < end {
        let state = lx.state;
        if state | 1 == st::STR_VAL {
            let run_end = next_special(bytes, i).min(end);
            if run_end > i {
                let base = STATE_FLAGS[state as usize] | if lx.nested > 0 { flag::NESTED } else { 0 };
                if sink.wants_run(base) {
                    sink.string_run(bytes, i, run_end, base);
                }
                i = run_end;
                if i == end || sink.done() {
                    return;
                }
                if sink.open != open {
                    open = sink.open;
                    [plain, nested] = sink.wanted_states();
                }
            }
        } else if state == st::ERROR {
            sink.after_error(bytes, i);
            return;
        }
        let wanted = if lx.nested > 0 { nested } else { plain };
        // (The state's bit is what `Sink::wants` would say, `put` refuses offset 0, and
        // `end` is at most the sink's length.)
        if wanted >> lx.state & 1 != 0 {
            sink.put(i, lx.flags_here(bytes, i) | boundary(bytes[i]));
            if sink.done() {
                return;
            }
            if sink.open != open {
                open = sink.open;
                [plain, nested] = sink.wanted_states();
            }
        }
        let t = BYTE_NEXT[lx.state as usize][bytes[i] as usize];
        if t < act::PUSH_OBJ {
            lx.state = t;
        } else {
            lx.act(t, CLASS[bytes[i] as usize], i, &mut top_keys);
        }
        i += 1;
    }
}

/// [`NEXT`] by byte rather than class, for every state: one lookup a byte in [`lex_from`].
static BYTE_NEXT: [[u8; 256]; st::COUNT] = {
    let mut t = [[0u8; 256]; st::COUNT];
    let mut s = 0;
    while s < st::COUNT {
        let mut b = 0;
        while b < 256 {
            t[s][b] = NEXT[s][CLASS[b] as usize];
            b += 1;
        }
        s += 1;
    }
    t
};

/// For each flag bit: the states (a bit each) whose offsets may carry it, [`MAY_FLAGS`] and
/// the boundary (any state may be nested: see [`Questions::wanted_states`]).
static STATES_MAY: [u64; 16] = {
    let mut t = [0u64; 16];
    let mut b = 0;
    while b < 16 {
        let mut s = 0;
        while s < st::COUNT {
            if (MAY_FLAGS[s] | flag::BOUNDARY) & (1 << b) != 0 {
                t[b] |= 1 << s;
            }
            s += 1;
        }
        b += 1;
    }
    t
};

/// Whether the lexer a pass from the first byte of `doc` has at `r.at()` is `r`'s.
#[cfg(test)]
pub(crate) fn resume_holds(doc: &str, r: Resume) -> bool {
    let bytes = doc.as_bytes();
    let mut lx = Resume::START.lexer();
    let mut top_keys = None;
    for i in 0..r.at() {
        lx.step(bytes, i, &mut top_keys);
    }
    let want = r.lexer();
    let mask = if lx.stack.depth >= 64 { u64::MAX } else { (1u64 << lx.stack.depth) - 1 };
    (lx.state, lx.stack.bits & mask, lx.stack.depth, &lx.stack.deep, lx.nested, lx.values_done)
        == (want.state, want.stack.bits, want.stack.depth, &want.stack.deep, want.nested, want.values_done)
}

/// The last offset of `doc` that may carry `f`, from a byte search from the end (`None` only
/// when none can, as [`may_carry`] says): an escape is right after a backslash, an offset in
/// `\uXXXX` at most five bytes after the backslash of a `\u`, a space next to the cut at most
/// one past a space, the prefix that parses right after a `}`. (The other flags may be
/// anywhere up to the end, `doc.len()`.) A question whose offsets are all before this needs
/// no lexing past it.
fn last_carrier(doc: &[u8], f: u16) -> Option<usize> {
    let len = doc.len();
    let at = |byte: u8, past: usize| memchr::memrchr(byte, doc).map(|b| b + past);
    let mut last = len;
    let mut bits = f;
    while bits != 0 {
        let bit = bits & bits.wrapping_neg();
        bits &= !bit;
        let carrier = match bit {
            flag::ESCAPE => at(b'\\', 1),
            // (Few backslashes: from the last one back to one before a `u`.)
            flag::UNICODE => {
                memchr::memrchr_iter(b'\\', doc).find(|&b| doc.get(b + 1) == Some(&b'u')).map(|b| b + 5)
            }
            flag::NEXT_TO_SPACE => at(b' ', 1),
            flag::PREFIX_PARSES => at(b'}', 1),
            flag::NESTED => may_carry(doc, flag::NESTED).then_some(len),
            _ => Some(len),
        };
        last = last.min(carrier?);
    }
    Some(last.min(len))
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

/// The most questions one pass of [`first_flagged`] answers (a call has at most 8 split plans).
const MAX_QUESTIONS: usize = 8;

/// One question of [`first_flagged`]: offsets carrying all of `want`, the first at or after
/// `start` and the first before it.
#[derive(Clone, Copy, Default)]
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
    /// The questions, `qs[..n]`.
    qs: [Question; MAX_QUESTIONS],
    n: usize,
    /// The flags some open question wants besides the boundary (all of them if one wants
    /// the boundary alone): an offset with none of them answers nothing.
    classes: u16,
}

impl Questions {
    /// No questions yet, about offsets `1..len`.
    fn new(len: usize) -> Questions {
        Questions { len, open: 0, qs: [Question::default(); MAX_QUESTIONS], n: 0, classes: 0 }
    }

    /// Asks for the first offset carrying `f` at or after `start` (and the first before it).
    fn ask(&mut self, f: u16, start: usize) {
        self.qs[self.n] = Question { want: f | flag::BOUNDARY, start, after: None, before: None };
        self.n += 1;
        self.open += 1;
        self.settle_classes();
    }

    /// The states (a bit each) at whose offsets `put` may answer an open question: those
    /// whose flags ([`Lexer::may_flags`]) meet [`Questions::classes`], outside a nested
    /// object and inside one. (An offset in no such state carries none of the flags an open
    /// question wants: `put` would do nothing with it.)
    fn wanted_states(&self) -> [u64; 2] {
        let mut plain = 0;
        let mut bits = self.classes & !flag::NESTED;
        while bits != 0 {
            plain |= STATES_MAY[bits.trailing_zeros() as usize];
            bits &= bits - 1;
        }
        let nested = if self.classes & flag::NESTED != 0 { u64::MAX } else { plain };
        [plain, nested]
    }

    fn settle_classes(&mut self) {
        self.classes = self.qs[..self.n].iter().filter(|q| q.after.is_none()).fold(0, |m, q| {
            m | match q.want & !flag::BOUNDARY {
                0 => u16::MAX,
                c => c,
            }
        });
    }
}

impl Sink for Questions {
    #[inline(always)]
    fn wants(&self, s: usize, may: u16) -> bool {
        s > 0 && s < self.len && may & self.classes != 0
    }

    #[inline(always)]
    fn put(&mut self, s: usize, f: u16) {
        if s == 0 || s >= self.len || f & self.classes == 0 {
            return;
        }
        let open = self.open;
        for q in self.qs[..self.n].iter_mut().filter(|q| q.after.is_none()) {
            if f & q.want == q.want && q.hit(s) {
                self.open -= 1;
            }
        }
        if self.open != open {
            self.settle_classes();
        }
    }

    fn string_run(&mut self, bytes: &[u8], i: usize, end: usize, base: u16) {
        // The offsets of a run carry `base`, the boundary, and NEXT_TO_SPACE where
        // byte `s` or byte `s - 1` is a space (such an offset is always a boundary: a space
        // is followed by no continuation byte).
        let end = end.min(self.len);
        let open = self.open;
        for q in self.qs[..self.n].iter_mut().filter(|q| q.after.is_none()) {
            let need = q.want & !base;
            if need & !(flag::BOUNDARY | flag::NEXT_TO_SPACE) != 0 {
                continue;
            }
            // The first offset of `from..to` (`from` > 0) the question's flags are at.
            let first = |from: usize, to: usize| {
                if from >= to {
                    None
                } else if need & flag::NEXT_TO_SPACE != 0 {
                    // At `from` if byte `from - 1` is a space; else at the first space.
                    if bytes[from - 1] == b' ' {
                        Some(from)
                    } else {
                        memchr::memchr(b' ', &bytes[from..to]).map(|p| from + p)
                    }
                } else {
                    (from..to).find(|&s| need & flag::BOUNDARY == 0 || (bytes[s] as i8) >= -0x40)
                }
            };
            let from = i.max(1);
            if q.before.is_none() {
                if let Some(s) = first(from, end.min(q.start)) {
                    q.before = Some(s);
                }
            }
            if let Some(s) = first(from.max(q.start), end) {
                q.after = Some(s);
                self.open -= 1;
            }
        }
        if self.open != open {
            self.settle_classes();
        }
    }

    #[inline(always)]
    fn wants_run(&self, base: u16) -> bool {
        // A run answers a question whose flags (but the boundary) are among the run's and
        // the space's; `classes` is all of them if one wants the boundary alone.
        self.classes & (base | flag::NEXT_TO_SPACE) != 0
    }

    fn after_error(&mut self, bytes: &[u8], i: usize) {
        // Only the boundary flag: only a question for the boundary alone is answered here.
        if !self.qs[..self.n].iter().any(|q| q.after.is_none() && q.want == flag::BOUNDARY) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift), so a failure names its document.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Every byte class and every token's pieces, for documents that break anywhere.
    const PIECES: [&str; 44] = [
        "{", "}", "[", "]", ":", ",", "\"", "\\", "/", " ", "\t", "\n", "\r", "\u{1}", "0", "1", "9", "-",
        "+", ".", "e", "E", "a", "b", "c", "F", "f", "l", "n", "r", "s", "t", "u", "x", "é", "true", "false",
        "null", "\\u00e9", "\\ud83d", "\"k\": ", "{\"a\": ", "1.5e-3", "}}",
    ];

    /// A random value: every token, escapes, numbers, nesting, whitespace anywhere it may go.
    fn value(r: &mut Rng, depth: usize, out: &mut String) {
        let ws = |r: &mut Rng, out: &mut String| {
            for _ in 0..r.below(3).saturating_sub(1) {
                out.push([' ', '\t', '\n', '\r'][r.below(4)]);
            }
        };
        ws(r, out);
        let pick = if depth > 6 { 3 + r.below(5) } else { r.below(8) };
        match pick {
            0 | 1 => {
                out.push('{');
                for k in 0..r.below(4) {
                    if k > 0 {
                        out.push(',');
                    }
                    ws(r, out);
                    string(r, out);
                    ws(r, out);
                    out.push(':');
                    value(r, depth + 1, out);
                }
                ws(r, out);
                out.push('}');
            }
            2 => {
                out.push('[');
                for k in 0..r.below(4) {
                    if k > 0 {
                        out.push(',');
                    }
                    value(r, depth + 1, out);
                }
                ws(r, out);
                out.push(']');
            }
            3 | 4 => string(r, out),
            5 => out.push_str(["0", "-0", "12", "-3.25", "1e5", "2E+10", "0.5e-2", "7"][r.below(8)]),
            6 => out.push_str(["true", "false", "null"][r.below(3)]),
            _ => out.push_str(["1", "\"\"", "[]", "{}"][r.below(4)]),
        }
        ws(r, out);
    }

    fn string(r: &mut Rng, out: &mut String) {
        out.push('"');
        for _ in 0..r.below(8) {
            out.push_str(
                ["a", " ", "b c", "\\n", "\\\"", "\\\\", "\\/", "\\u00e9", "\\uD83D\\uDE00", "é", "東", "x"]
                    [r.below(12)],
            );
        }
        out.push('"');
    }

    /// A reference for the lexer written from RFC 8259 and the docs of [`flag`], [`Scan`] and
    /// [`Observer`], not from the lexer: a recursive descent that writes the context of each
    /// offset as it passes it. Plain and slow; the tests hold the lexer's every answer to it,
    /// and it to serde_json wherever serde_json can tell.
    mod spec {
        use super::super::{flag, Status};
        use super::Seen;
        use std::ops::Range;

        pub(super) struct Answer {
            pub flags: Vec<u16>,
            pub status: Status,
            pub top_keys: Vec<Range<usize>>,
            pub deepest: usize,
            pub top_values: Vec<Range<usize>>,
            /// What an observer is told; meaningful only where no error comes.
            pub seen: Vec<Seen>,
        }

        /// Why a value stopped short: the input ended, or a byte broke the grammar.
        enum Stop {
            End,
            Error,
        }

        type Step = Result<(), Stop>;

        struct Parse<'a> {
            doc: &'a str,
            i: usize,
            flags: Vec<u16>,
            depth: usize,
            deepest: usize,
            /// Objects open inside the top-level container.
            nested: usize,
            top_keys: Vec<Range<usize>>,
            top_values: Vec<Range<usize>>,
            seen: Vec<Seen>,
            /// The string's last escape was a high surrogate, not yet paired.
            high: bool,
        }

        impl Parse<'_> {
            fn peek(&self) -> Option<u8> {
                self.doc.as_bytes().get(self.i).copied()
            }

            /// Offset `i` is in a context with flags `f` (and the nesting).
            fn mark(&mut self, f: u16) {
                self.flags[self.i] = f | if self.nested > 0 { flag::NESTED } else { 0 };
            }

            /// Whitespace in a context with flags `f`, up to the next byte.
            fn ws(&mut self, f: u16) -> Result<u8, Stop> {
                loop {
                    self.mark(f);
                    match self.peek() {
                        None => return Err(Stop::End),
                        Some(b' ' | b'\t' | b'\n' | b'\r') => self.i += 1,
                        Some(c) => return Ok(c),
                    }
                }
            }

            /// A half of a surrogate pair that the next thing in its string shows is alone.
            fn lone_if_high(&mut self) {
                if std::mem::take(&mut self.high) {
                    self.seen.push(Seen::Lone);
                }
            }

            fn value(&mut self) -> Step {
                match self.ws(0)? {
                    b'{' => self.container(true),
                    b'[' => self.container(false),
                    b'"' => self.string(false),
                    b'-' | b'0'..=b'9' => self.number(),
                    b't' => self.literal("true"),
                    b'f' => self.literal("false"),
                    b'n' => self.literal("null"),
                    _ => Err(Stop::Error),
                }
            }

            fn container(&mut self, object: bool) -> Step {
                let start = self.i;
                self.i += 1;
                if object && self.depth > 0 {
                    self.nested += 1;
                }
                self.depth += 1;
                self.deepest = self.deepest.max(self.depth);
                let close = if object { b'}' } else { b']' };
                let mut first = true;
                loop {
                    if first && self.ws(0)? == close {
                        break;
                    }
                    if object {
                        if self.ws(0)? != b'"' {
                            return Err(Stop::Error);
                        }
                        let key = self.i + 1;
                        self.string(true)?;
                        if self.depth == 1 {
                            self.top_keys.push(key..self.i - 1);
                        }
                        if self.ws(flag::KEY_COLON)? != b':' {
                            return Err(Stop::Error);
                        }
                        self.i += 1;
                    }
                    self.value()?;
                    match self.ws(0)? {
                        b',' => self.i += 1,
                        c if c == close => break,
                        _ => return Err(Stop::Error),
                    }
                    first = false;
                }
                self.i += 1;
                self.depth -= 1;
                if object && self.depth > 0 {
                    self.nested -= 1;
                }
                if self.depth == 1 {
                    self.top_values.push(start..self.i);
                }
                Ok(())
            }

            fn string(&mut self, key: bool) -> Step {
                let inside = flag::IN_STRING | if key { 0 } else { flag::IN_VALUE_STRING };
                let bytes = self.doc.as_bytes();
                self.i += 1;
                loop {
                    // A space of the string's content on either side of the cut.
                    let space = bytes[self.i - 1] == b' ' || self.peek() == Some(b' ');
                    self.mark(inside | if space { flag::NEXT_TO_SPACE } else { 0 });
                    match self.peek() {
                        None => return Err(Stop::End),
                        Some(b'"') => {
                            self.lone_if_high();
                            self.i += 1;
                            return Ok(());
                        }
                        Some(b'\\') => {
                            self.i += 1;
                            self.escape(inside)?;
                        }
                        Some(0..=0x1f) => return Err(Stop::Error),
                        Some(_) => {
                            self.lone_if_high();
                            let c = self.doc[self.i..].chars().next().expect("a character");
                            if !c.is_ascii() {
                                self.seen.push(Seen::NonAscii(c));
                            }
                            for _ in 1..c.len_utf8() {
                                self.i += 1;
                                self.mark(inside);
                            }
                            self.i += 1;
                        }
                    }
                }
            }

            /// After a string's backslash.
            fn escape(&mut self, inside: u16) -> Step {
                self.mark(inside | flag::ESCAPE);
                match self.peek() {
                    None => Err(Stop::End),
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                        self.lone_if_high();
                        self.seen.push(Seen::Other);
                        self.i += 1;
                        Ok(())
                    }
                    Some(b'u') => {
                        self.i += 1;
                        let mut v = 0;
                        for _ in 0..4 {
                            self.mark(inside | flag::UNICODE);
                            let c = self.peek().ok_or(Stop::End)?;
                            v = v << 4 | char::from(c).to_digit(16).ok_or(Stop::Error)?;
                            self.i += 1;
                        }
                        // A lone half is told as soon as it is known to be alone: a high one
                        // by what follows it, a low one by itself.
                        match v {
                            0xD800..=0xDBFF => {
                                self.lone_if_high();
                                self.high = true;
                            }
                            0xDC00..=0xDFFF if std::mem::take(&mut self.high) => {}
                            0xDC00..=0xDFFF => self.seen.push(Seen::Lone),
                            _ => self.lone_if_high(),
                        }
                        self.seen.push(Seen::Unicode(v));
                        Ok(())
                    }
                    Some(_) => Err(Stop::Error),
                }
            }

            /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
            fn number(&mut self) -> Step {
                let start = self.i;
                let r = self.number_grammar();
                if !matches!(r, Err(Stop::Error)) {
                    // Whole, or cut by the end of the input.
                    self.seen.push(Seen::Number(self.doc[start..self.i].into()));
                }
                r
            }

            fn number_grammar(&mut self) -> Step {
                let take = |p: &mut Self, ok: fn(u8) -> bool| -> Result<bool, Stop> {
                    match p.peek() {
                        Some(c) if ok(c) => {
                            p.i += 1;
                            p.mark(0);
                            Ok(true)
                        }
                        _ => Ok(false),
                    }
                };
                let digits = |p: &mut Self| -> Step {
                    let b = p.peek().ok_or(Stop::End)?;
                    if !b.is_ascii_digit() {
                        return Err(Stop::Error);
                    }
                    while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                        p.i += 1;
                        p.mark(0);
                    }
                    Ok(())
                };
                take(self, |c| c == b'-')?;
                if !take(self, |c| c == b'0')? {
                    digits(self)?;
                }
                if take(self, |c| c == b'.')? {
                    digits(self)?;
                }
                if take(self, |c| c == b'e' || c == b'E')? {
                    take(self, |c| c == b'+' || c == b'-')?;
                    digits(self)?;
                }
                Ok(())
            }

            fn literal(&mut self, word: &str) -> Step {
                for w in word.bytes() {
                    self.mark(0);
                    match self.peek() {
                        None => return Err(Stop::End),
                        Some(c) if c == w => self.i += 1,
                        Some(_) => return Err(Stop::Error),
                    }
                }
                Ok(())
            }
        }

        /// The reference's answers for `doc`; values end to end are lexed one after another.
        pub(super) fn scan(doc: &str) -> Answer {
            let len = doc.len();
            let mut p = Parse {
                doc,
                i: 0,
                flags: vec![0; len + 1],
                depth: 0,
                deepest: 0,
                nested: 0,
                top_keys: Vec::new(),
                top_values: Vec::new(),
                seen: Vec::new(),
                high: false,
            };
            let mut values = 0;
            let mut prefix_parses = None;
            let status = loop {
                match p.value() {
                    Err(Stop::Error) => break Status::Invalid,
                    Err(Stop::End) if values > 0 => break Status::Invalid,
                    Err(Stop::End) if doc.bytes().all(|b| b" \t\n\r".contains(&b)) => break Status::Empty,
                    Err(Stop::End) => break Status::Incomplete,
                    Ok(()) => values += 1,
                }
                if values == 1 && doc.as_bytes()[p.i - 1] == b'}' {
                    prefix_parses = Some(p.i);
                }
                if p.ws(0).is_err() {
                    break if values == 1 { Status::Valid } else { Status::Invalid };
                }
            };
            p.lone_if_high();
            let mut flags = p.flags;
            if let Some(s) = prefix_parses {
                flags[s] |= flag::PREFIX_PARSES;
            }
            for (s, f) in flags.iter_mut().enumerate() {
                if doc.is_char_boundary(s) {
                    *f |= flag::BOUNDARY;
                }
            }
            Answer {
                flags,
                status,
                top_keys: p.top_keys,
                deepest: p.deepest,
                top_values: p.top_values,
                seen: p.seen,
            }
        }
    }

    /// Generated arguments, hand-made and random documents, and each of them broken: a piece
    /// inserted, a char deleted or replaced, a prefix kept, two written end to end.
    fn documents(n: usize) -> Vec<String> {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let mut docs: Vec<String> = vec![
            "".into(),
            " \t\n".into(),
            "{".into(),
            "20".into(),
            "-".into(),
            "1 2".into(),
            "01".into(),
            r#"{"a":1}{"a":2}"#.into(),
            r#"{"a": 1} x"#.into(),
            format!("{}{}", "[{\"k\": ".repeat(80), "}]".repeat(80)),
            format!("{}1{}", "[".repeat(200), "]".repeat(199)),
        ];
        for case in crate::cases(&crate::GenConfig::default(), 13).take(n / 4) {
            docs.extend(case.streams.iter().flat_map(|t| t.calls().map(|c| c.arguments.clone())));
        }
        for _ in 0..n {
            let mut d = String::new();
            if r.below(3) == 0 {
                for _ in 0..r.below(30) {
                    d.push_str(PIECES[r.below(PIECES.len())]);
                }
            } else {
                value(&mut r, 0, &mut d);
            }
            docs.push(d);
        }
        let whole = docs.len();
        for k in 0..whole {
            let d = docs[k].clone();
            let cuts: Vec<usize> = (0..=d.len()).filter(|&s| d.is_char_boundary(s)).collect();
            let at = cuts[r.below(cuts.len())];
            let after = cuts.iter().copied().find(|&s| s > at).unwrap_or(d.len());
            let mut broken = d.clone();
            match r.below(5) {
                0 => broken.insert_str(at, PIECES[r.below(PIECES.len())]),
                1 => broken.replace_range(at..after, ""),
                2 => broken.replace_range(at..after, PIECES[r.below(PIECES.len())]),
                3 => broken.truncate(at),
                _ => broken = format!("{d}{}", docs[r.below(whole)]),
            }
            docs.push(broken);
        }
        docs
    }

    /// Four hex digits read by table are what they are read one at a time, every byte in
    /// every position, short inputs too.
    #[test]
    fn hex_digits_by_table() {
        let by_one = |b: &[u8], i: usize| {
            b.get(i..i + 4)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                .map(|h| h.iter().fold(0, |v, &d| v << 4 | hex_value(d)))
        };
        for b in 0..=255u8 {
            for at in 0..4 {
                let mut h = *b"9aF0";
                h[at] = b;
                assert_eq!(hex4(&h, 0), by_one(&h, 0), "{h:?}");
            }
        }
        for s in ["", "1", "12", "123", "x1234", "\\uD83D", "\\ude00x", "ffff", "FfFf", "g000"] {
            for i in 0..=s.len() {
                assert_eq!(hex4(s.as_bytes(), i), by_one(s.as_bytes(), i), "{s:?} {i}");
            }
        }
        assert_eq!(hex4(b"D83d", 0), Some(0xD83D));
    }

    /// The word-at-a-time run stops where a byte-by-byte search does, whatever the bytes
    /// around the stop (high bytes, borrows from every special byte) and the length.
    #[test]
    fn content_runs_stop_at_the_first_special_byte() {
        let mut r = Rng(3);
        let alphabet = [
            b'a', b' ', b'"', b'\\', 0, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xa0, 0xdf, 0xff, b'!', b'#', b'[',
            b']',
        ];
        for _ in 0..20_000 {
            // Mostly plain bytes now and then, so that runs pass sixteen bytes.
            let plain = r.below(2) == 0;
            let bytes: Vec<u8> = (0..r.below(90))
                .map(|_| match r.below(if plain { 60 } else { 1 }) {
                    0 => alphabet[r.below(alphabet.len())],
                    _ => [b'a', b' ', 0x7f, 0x80, 0xa0, 0xff, 0x20][r.below(7)],
                })
                .collect();
            let want = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20).unwrap_or(bytes.len());
            let high = bytes[..want].iter().any(|&b| b >= 0x80);
            assert_eq!(content_run(&bytes), (want, high), "{bytes:?}");
        }
    }

    const ALL: [u16; 9] = [
        flag::BOUNDARY,
        flag::NEXT_TO_SPACE,
        flag::ESCAPE,
        flag::UNICODE,
        flag::NESTED,
        flag::KEY_COLON,
        flag::PREFIX_PARSES,
        flag::IN_VALUE_STRING,
        flag::IN_STRING,
    ];

    /// No offset past `last_carrier` carries the flag, and none at all when it says `None`
    /// (whenever `may_carry` says none may); the bound is the last carrier exactly where the
    /// flag's byte search can tell.
    #[test]
    fn no_offset_past_the_last_carrier_carries_the_flag() {
        let mut exact = 0;
        for d in documents(6000) {
            let flags = scan(&d).flags;
            for &f in &ALL {
                let last = flags.iter().rposition(|&x| x & (f | flag::BOUNDARY) == f | flag::BOUNDARY);
                let bound = last_carrier(d.as_bytes(), f);
                if !may_carry(d.as_bytes(), f) {
                    assert_eq!(bound, None, "{d:?} flag {f}");
                }
                match bound {
                    None => assert_eq!(last, None, "{d:?} flag {f}"),
                    Some(bound) => {
                        assert!(last.is_none_or(|s| s <= bound), "{d:?} flag {f}: {last:?} past {bound}");
                        exact += usize::from(last == Some(bound) && bound < d.len());
                    }
                }
            }
        }
        assert!(exact > 1000, "{exact} exact bounds");
    }

    /// The pass that puts only offsets in a wanted state answers as the reference's flags
    /// of the whole document say (the first offset carrying the flag from the question's
    /// start, and the first before it, among those the pass lexes): from the first byte and
    /// from every resume point of huge and deep documents, up to the end and up to a random
    /// offset, with up to eight questions of any flags (the boundary alone too).
    #[test]
    fn the_wanted_state_pass_answers_as_the_reference() {
        let mut docs: Vec<(String, Vec<Resume>)> =
            documents(6000).into_iter().map(|d| (d, Vec::new())).collect();
        for k in 0..200u8 {
            let plan = crate::plan::DocPlan {
                form: [0, 11, 3, 1, 5, 13][usize::from(k % 6)],
                violate: 0,
                long: 2,
                size: k.wrapping_mul(13),
                fields: Default::default(),
                ws: k % 4,
                ws_bytes: Default::default(),
                form_arg: k,
            };
            let (mut doc, mut resumes) = (String::new(), Vec::new());
            crate::doc::render(k % 6, &plan, 3, k % 2 == 0, 1 << 16, &mut doc, &mut resumes);
            docs.push((doc, resumes));
        }
        let mut r = Rng(0x51ab);
        let mut answered = 0;
        for (d, resumes) in &docs {
            let bytes = d.as_bytes();
            let len = bytes.len();
            if len < 2 {
                continue;
            }
            let flags = spec::scan(d).flags;
            let mut points = vec![Resume::START];
            points.extend(resumes.iter().copied());
            for p in points {
                let end = if r.below(3) == 0 { p.at + r.below(len + 1 - p.at) } else { len };
                let mut questions = [(0u16, 0usize); MAX_QUESTIONS];
                let n = 1 + r.below(MAX_QUESTIONS);
                for q in &mut questions[..n] {
                    let f = match r.below(12) {
                        0 => ALL[r.below(ALL.len())] | ALL[r.below(ALL.len())],
                        1 => flag::BOUNDARY,
                        _ => ALL[r.below(ALL.len())],
                    };
                    *q = (f, 1 + r.below(len - 1));
                }
                let mut sink = Questions::new(end);
                for &(f, start) in &questions[..n] {
                    sink.ask(f, start);
                }
                lex_from(bytes, p.lexer(), p.at, end, &mut sink);
                let got: Vec<_> = sink.qs[..n].iter().map(|q| (q.after, q.before)).collect();
                // The pass sees offsets `p.at..end` but 0.
                let from = p.at.max(1);
                let want: Vec<_> = questions[..n]
                    .iter()
                    .map(|&(f, start)| {
                        let first = |r: std::ops::Range<usize>| {
                            r.into_iter().find(|&s| flags[s] & (f | flag::BOUNDARY) == f | flag::BOUNDARY)
                        };
                        (first(from.max(start)..end), first(from..start.min(end)))
                    })
                    .collect();
                assert_eq!(got, want, "{d:?} from {p:?} to {end} asking {:?}", &questions[..n]);
                answered += got.iter().filter(|a| a.0.is_some()).count();
            }
        }
        assert!(answered > 20_000, "{answered} answers");
    }

    /// The lexer says what the reference says of every offset of every document (flags,
    /// status, keys, depth), and so do its two partial passes.
    #[test]
    fn every_answer_is_the_references() {
        let docs = documents(6000);
        let mut r = Rng(7);
        for d in &docs {
            let want = spec::scan(d);
            let got = scan(d);
            assert_eq!(got.flags, want.flags, "{d:?}");
            assert_eq!(
                (got.status, &got.top_keys, got.deepest),
                (want.status, &want.top_keys, want.deepest),
                "{d:?}"
            );
            let len = d.len();
            let mut at: Vec<usize> = (0..r.below(6)).map(|_| r.below(len + 1)).collect();
            at.sort_unstable();
            let some = scan_at(d, &at);
            let flags: Vec<u16> = at.iter().map(|&s| want.flags[s]).collect();
            assert_eq!(some.flags, flags, "{d:?} at {at:?}");
            assert_eq!(
                (some.status, &some.top_keys, some.deepest),
                (want.status, &want.top_keys, want.deepest),
                "{d:?}"
            );
            let questions: Vec<(u16, u8)> = (0..1 + r.below(4))
                .map(|_| (ALL[r.below(ALL.len())], [0, 1, 128, 255, r.below(256) as u8][r.below(5)]))
                .collect();
            let answers: Vec<Option<usize>> =
                questions.iter().map(|&(f, fraction)| first_in_flags(&want.flags, f, fraction)).collect();
            assert_eq!(first_flagged(d, &questions, &[]), answers, "{d:?} {questions:?}");
        }
    }

    /// What an observer was told, in order.
    #[derive(Debug, PartialEq)]
    enum Seen {
        Number(String),
        Unicode(u32),
        Other,
        NonAscii(char),
        Lone,
    }

    #[derive(Default)]
    struct Log(Vec<Seen>);

    impl Observer for Log {
        fn number(&mut self, text: &str) {
            self.0.push(Seen::Number(text.into()));
        }
        fn unicode_escape(&mut self, v: u32) {
            self.0.push(Seen::Unicode(v));
        }
        fn other_escape(&mut self) {
            self.0.push(Seen::Other);
        }
        fn non_ascii(&mut self, c: char) {
            self.0.push(Seen::NonAscii(c));
        }
        fn lone_surrogate(&mut self) {
            self.0.push(Seen::Lone);
        }
    }

    /// `scan_observed` of `d` at `at` says what the reference `want` says: the flags of those
    /// offsets, the status, keys, depth and top-level containers, and (where no error or
    /// second value makes them unreliable) every observation in order.
    fn observed_as_the_reference(d: &str, want: &spec::Answer, at: &[usize]) {
        let mut log = Log::default();
        let got = scan_observed(d, at, &mut log);
        let flags: Vec<u16> = at.iter().map(|&s| want.flags[s]).collect();
        assert_eq!(got.flags, flags, "{d:?} at {at:?}");
        assert_eq!(
            (got.status, &got.top_keys, got.deepest, &got.top_values),
            (want.status, &want.top_keys, want.deepest, &want.top_values),
            "{d:?} at {at:?}"
        );
        if want.status != Status::Invalid {
            assert_eq!(log.0, want.seen, "{d:?} at {at:?}");
        }
    }

    /// The observing scan answers as the reference (flags of any offsets, duplicates
    /// included; status, keys, depth; every observation in order), on random and broken
    /// documents, generated ones of every configuration (huge ones too), the named cases'
    /// and prefixes of them all.
    #[test]
    fn the_observing_scan_answers_as_the_reference() {
        let mut docs = documents(3000);
        let configs = [
            (crate::GenConfig::default(), 1500),
            (crate::GenConfig { schema: true, ..crate::GenConfig::default() }, 1500),
            (crate::GenConfig { max_args_size: 512 * 1024, ..crate::GenConfig::default() }, 60),
            (crate::GenConfig { transport: true, corrupt: true, ..crate::GenConfig::default() }, 500),
        ];
        let mut splits: Vec<(usize, Vec<usize>)> = Vec::new();
        for (cfg, n) in &configs {
            for case in crate::cases(cfg, 31).take(*n) {
                for c in case.streams.iter().flat_map(|t| t.calls()) {
                    splits.push((docs.len(), c.splits.clone()));
                    docs.push(c.arguments.clone());
                }
            }
        }
        for named in crate::named::all() {
            for c in named.case.streams.iter().flat_map(|t| t.calls()) {
                splits.push((docs.len(), c.splits.clone()));
                docs.push(c.arguments.clone());
            }
        }
        for d in [
            format!("{}{}", "[{\"k\": \"\\u00e9 é x\", \"n\": -1.5e3}, ".repeat(300), "1]"),
            format!("{}\"\\ud800\"{}", "{\"a\":[".repeat(100), "]}".repeat(100)),
            format!("{}1{}", "[".repeat(300), "]".repeat(300)),
            "{\"a\": \"\u{1}\"}".into(),
            "{\"a\": \"é\u{7f}\u{80}\"}".into(),
        ] {
            docs.push(d);
        }
        let n = docs.len();
        for k in 0..n {
            let cut = docs[k].len() * 2 / 3;
            if let Some(p) = docs[k].get(..cut) {
                docs.push(p.to_owned());
            }
        }
        let mut r = Rng(0x5851_f42d_4c95_7f2d);
        for (k, d) in docs.iter().enumerate() {
            let len = d.len();
            let want = spec::scan(d);
            observed_as_the_reference(d, &want, &[]);
            let mut at: Vec<usize> = (0..r.below(24)).map(|_| r.below(len + 1)).collect();
            at.sort_unstable();
            observed_as_the_reference(d, &want, &at);
            let step = 1 + len / 400;
            observed_as_the_reference(d, &want, &(0..=len).step_by(step).collect::<Vec<_>>());
            if r.below(4) == 0 {
                observed_as_the_reference(
                    d,
                    &want,
                    &(0..=len).flat_map(|s| [s, s]).take(2 * 600).collect::<Vec<_>>(),
                );
            }
            if let Some((_, s)) = splits.iter().find(|(i, _)| *i == k) {
                let mut s: Vec<usize> = s.iter().map(|&s| s.min(len)).collect();
                s.sort_unstable();
                observed_as_the_reference(d, &want, &s);
            }
        }
    }

    fn at(doc: &str, s: usize) -> u16 {
        scan(doc).flags[s]
    }

    /// What the builder asked of the full scan's flags before `first_flagged` answered it.
    fn first_in_flags(flags: &[u16], f: u16, fraction: u8) -> Option<usize> {
        let len = flags.len() - 1;
        if len < 2 {
            return None;
        }
        let want = f | flag::BOUNDARY;
        let start = 1 + usize::from(fraction) * (len - 1) / 256;
        let ok = |s: &usize| flags[*s] & want == want;
        (start..len).find(ok).or_else(|| (1..start).find(ok))
    }

    /// On hand-made documents (broken ones too) and on generated ones, every flag and point.
    #[test]
    fn questions_get_what_the_full_scan_says() {
        let docs = [
            "",
            "{",
            "{}",
            r#"{"note": "shipped on the 3 rd of March", "a": {"b": [1, 2.5e3, "x y"]}}"#,
            r#"{"city": "M\u00e9rida \ud83d\ude00", "k" : {"n": {"m": " é 東京 "}}}  "#,
            r#"{"a": 1} {"b": 2}"#,
            r#"{"a": "x\qy z", "b": 1}"#,
            r#"{"a": 01, "b": " c "}"#,
            r#"[" a ", {"k": "v"}, tru"#,
            "{\"a\": \"  \"}",
            r#"{"unterminated": "a b c"#,
        ];
        let all = [
            flag::NEXT_TO_SPACE,
            flag::ESCAPE,
            flag::UNICODE,
            flag::NESTED,
            flag::KEY_COLON,
            flag::PREFIX_PARSES,
            flag::IN_VALUE_STRING,
            flag::IN_STRING,
        ];
        let mut generated: Vec<String> = docs.iter().map(|d| d.to_string()).collect();
        for case in crate::cases(&crate::GenConfig::default(), 11).take(1500) {
            generated.extend(case.streams.iter().flat_map(|t| t.calls().map(|c| c.arguments.clone())));
        }
        for doc in generated.iter().map(String::as_str) {
            let flags = scan(doc).flags;
            for fraction in [0u8, 1, 37, 128, 200, 255] {
                let questions: Vec<(u16, u8)> = all.iter().map(|&f| (f, fraction)).collect();
                let answers = first_flagged(doc, &questions, &[]);
                for (&(f, fr), got) in questions.iter().zip(&answers) {
                    assert_eq!(*got, first_in_flags(&flags, f, fr), "{doc:?} flag {f} at {fr}");
                }
                for &f in &all {
                    assert_eq!(
                        first_flagged(doc, &[(f, fraction)], &[])[0],
                        first_in_flags(&flags, f, fraction)
                    );
                }
            }
        }
    }

    #[test]
    fn the_five_split_positions_of_the_seed() {
        let d = r#"{"note": "shipped on the 3 rd of March"}"#;
        let s = d.find("3 ").unwrap() + 1;
        assert_ne!(at(d, s) & flag::NEXT_TO_SPACE, 0);
        let d = r#"{"note": "line one\nline two"}"#;
        let s = d.find('\\').unwrap() + 1;
        assert_ne!(at(d, s) & flag::ESCAPE, 0);
        assert_eq!(at(d, s) & flag::UNICODE, 0);
        let d = r#"{"city": "M\u00e9rida"}"#;
        let s = d.find("e9").unwrap();
        assert_ne!(at(d, s) & flag::UNICODE, 0);
        assert_eq!(at(d, s) & flag::ESCAPE, 0);
        let d = r#"{"filter": {"status": "open"}}"#;
        let s = d.find("en").unwrap();
        assert_ne!(at(d, s) & flag::NESTED, 0);
        assert_eq!(at(d, d.len() - 1) & flag::NESTED, 0, "after the nested object closed");
        let d = r#"{"limit" : 20}"#;
        assert_ne!(at(d, 8) & flag::KEY_COLON, 0);
        assert_ne!(at(d, 9) & flag::KEY_COLON, 0);
        assert_eq!(at(d, 7) & flag::KEY_COLON, 0, "still inside the key");
        assert_ne!(at(d, 7) & flag::IN_STRING, 0);
        assert_eq!(at(d, 7) & flag::IN_VALUE_STRING, 0);
    }

    #[test]
    fn prefix_parses_only_after_the_top_level_brace() {
        let d = r#"{"a": {"b": 1}}  "#;
        let sc = scan(d);
        assert_eq!(sc.status, Status::Valid);
        let hits: Vec<usize> = (0..=d.len()).filter(|&s| sc.flags[s] & flag::PREFIX_PARSES != 0).collect();
        assert_eq!(hits, [15]);
        let d = r#"{"a":1}{"a":2}"#;
        let sc = scan(d);
        assert_eq!(sc.status, Status::Invalid);
        let hits: Vec<usize> = (0..=d.len()).filter(|&s| sc.flags[s] & flag::PREFIX_PARSES != 0).collect();
        assert_eq!(hits, [7]);
    }

    #[test]
    fn status_tells_cut_from_broken() {
        assert_eq!(scan("").status, Status::Empty);
        assert_eq!(scan(r#"{"a": 1.5e3, "b": [true, null, -0]}"#).status, Status::Valid);
        assert_eq!(scan(r#"{"a": "x"#).status, Status::Incomplete);
        assert_eq!(scan(r#"{"a": 1"#).status, Status::Incomplete);
        assert_eq!(scan(r#"{"a": "\q"}"#).status, Status::Invalid);
        assert_eq!(scan(r#"{"a": 01}"#).status, Status::Invalid);
        assert_eq!(scan("{\"a\": \"x\ny\"}").status, Status::Invalid);
        assert_eq!(scan(r#"{"a": 1} x"#).status, Status::Invalid);
        assert_eq!(scan("20").status, Status::Valid);
    }

    #[test]
    fn top_keys_are_recorded() {
        let d = r#"{"a": {"x": 1}, "b\"": 2}"#;
        let sc = scan(d);
        let keys: Vec<&str> = sc.top_keys.iter().map(|r| &d[r.clone()]).collect();
        assert_eq!(keys, ["a", "b\\\""]);
    }

    /// serde_json's strict parse, with no depth limit: `d` is one whole value.
    fn serde_parses(d: &str) -> Result<(), serde_json::Error> {
        use serde::Deserialize;
        let mut de = serde_json::Deserializer::from_str(d);
        de.disable_recursion_limit();
        serde::de::IgnoredAny::deserialize(&mut de)?;
        de.end()
    }

    /// The keys of a top-level object as serde_json reads them: in order, duplicates too.
    struct TopKeys(Vec<String>);

    impl<'de> serde::Deserialize<'de> for TopKeys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TopKeys, D::Error> {
            struct Keys;
            impl<'de> serde::de::Visitor<'de> for Keys {
                type Value = TopKeys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<TopKeys, A::Error> {
                    let mut keys = Vec::new();
                    while let Some(k) = m.next_key::<String>()? {
                        keys.push(k);
                        m.next_value::<serde::de::IgnoredAny>()?;
                    }
                    Ok(TopKeys(keys))
                }
            }
            d.deserialize_map(Keys)
        }
    }

    /// Collects every number of a value in document order: serde_json (with arbitrary
    /// precision) hands a number over as a map of one private key to its text.
    struct Numbers<'a>(&'a mut Vec<String>);

    impl<'de> serde::de::DeserializeSeed<'de> for Numbers<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> serde::de::Visitor<'de> for Numbers<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
            while a.next_element_seed(Numbers(&mut *self.0))?.is_some() {}
            Ok(())
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
            while let Some(k) = m.next_key::<String>()? {
                if k == "$serde_json::private::Number" {
                    self.0.push(m.next_value()?);
                } else {
                    m.next_value_seed(Numbers(&mut *self.0))?;
                }
            }
            Ok(())
        }
    }

    /// The lexer's verdict is serde_json's strict parse's, and so is the reference's: one
    /// whole value exactly where serde_json parses; cut where serde_json ran out of input;
    /// broken where it did not, but for a number cut before its digits (serde_json calls `-`
    /// an invalid number); never broken on a prefix of a whole value. The closing brace's
    /// flag stands exactly where the prefix before it parses. Of the documents that parse,
    /// the top-level keys and the numbers are the ones serde_json reads.
    #[test]
    fn answers_agree_with_serde_json() {
        let mut docs = documents(3000);
        for case in crate::cases(&crate::GenConfig::default(), 5).take(3000) {
            docs.extend(case.streams.iter().flat_map(|t| t.calls().map(|c| c.arguments.clone())));
        }
        let (mut valid, mut cut, mut broken, mut keyed, mut numbered) = (0, 0, 0, 0, 0);
        for d in &docs {
            let sc = scan(d);
            assert_eq!(spec::scan(d).status, sc.status, "the reference on {d:?}");
            let blank = d.bytes().all(|b| b" \t\n\r".contains(&b));
            match serde_parses(d) {
                Ok(()) => assert_eq!(sc.status, Status::Valid, "{d:?}"),
                Err(_) if blank => assert_eq!(sc.status, Status::Empty, "{d:?}"),
                Err(e) if e.is_eof() => assert_eq!(sc.status, Status::Incomplete, "{d:?}"),
                Err(e) => {
                    let number_cut =
                        sc.status == Status::Incomplete && d.ends_with(['-', '+', '.', 'e', 'E']);
                    assert!(sc.status == Status::Invalid || number_cut, "{:?} for {d:?} ({e})", sc.status);
                }
            }
            for s in (1..=d.len()).filter(|&s| d.as_bytes()[s - 1] == b'}') {
                let parses = serde_parses(&d[..s]).is_ok();
                assert_eq!(sc.flags[s] & flag::PREFIX_PARSES != 0, parses, "{d:?} at {s}");
            }
            match sc.status {
                Status::Valid => valid += 1,
                Status::Incomplete => cut += 1,
                _ => broken += 1,
            }
            if sc.status != Status::Valid {
                continue;
            }
            let step = 1 + d.len() / 64;
            for s in (0..d.len()).step_by(step).filter(|&s| d.is_char_boundary(s)) {
                let status = scan(&d[..s]).status;
                assert_ne!(status, Status::Invalid, "{:?} of {d:?}", &d[..s]);
                assert_eq!(status == Status::Valid, serde_parses(&d[..s]).is_ok(), "{:?} of {d:?}", &d[..s]);
            }
            let mut de = serde_json::Deserializer::from_str(d);
            de.disable_recursion_limit();
            if let Ok(TopKeys(keys)) = serde::Deserialize::deserialize(&mut de) {
                let raw: Vec<String> = sc
                    .top_keys
                    .iter()
                    .map(|r| serde_json::from_str(&format!("\"{}\"", &d[r.clone()])).expect("a key"))
                    .collect();
                assert_eq!(raw, keys, "{d:?}");
                keyed += 1;
            }
            let mut de = serde_json::Deserializer::from_str(d);
            de.disable_recursion_limit();
            let mut want = Vec::new();
            if serde::de::DeserializeSeed::deserialize(Numbers(&mut want), &mut de).is_ok() {
                let mut log = Log::default();
                scan_observed(d, &[], &mut log);
                let got: Vec<String> = log
                    .0
                    .into_iter()
                    .filter_map(|s| if let Seen::Number(n) = s { Some(n) } else { None })
                    // As serde_json writes it (`1e3` as `1e+3`).
                    .map(|n| serde_json::from_str::<serde_json::Number>(&n).expect("a number").to_string())
                    .collect();
                assert_eq!(got, want, "{d:?}");
                numbered += 1;
            }
        }
        assert!(
            valid > 5000 && cut > 500 && broken > 2000 && keyed > 3000 && numbered > 3000,
            "{valid} {cut} {broken} {keyed} {numbered}"
        );
    }

    /// The flags of a few offsets are those the full scan gives them, duplicates included,
    /// on every generated document and on documents that end in an error.
    #[test]
    fn scan_at_agrees_with_the_full_scan() {
        let mut docs: Vec<String> =
            vec![r#"{"a": "x\q y", "b": 1}"#.into(), r#"{"a": [1, 2"#.into(), "".into()];
        for case in crate::cases(&crate::GenConfig::default(), 9).take(2000) {
            docs.extend(case.streams.iter().flat_map(|t| t.calls().map(|c| c.arguments.clone())));
        }
        for d in &docs {
            let full = scan(d);
            let len = d.len();
            let mut at: Vec<usize> = [0, len / 3, len / 3, len / 2 + 1, len.saturating_sub(1), len]
                .into_iter()
                .map(|s| s.min(len))
                .collect();
            at.sort_unstable();
            let some = scan_at(d, &at);
            let want: Vec<u16> = at.iter().map(|&s| full.flags[s]).collect();
            assert_eq!(some.flags, want, "{d:?} at {at:?}");
            assert_eq!(some.status, full.status);
            assert_eq!(some.top_keys, full.top_keys);
        }
    }

    #[test]
    fn deep_documents_keep_their_containers() {
        let deep = format!("{}{}{}", "[".repeat(70), r#"{"a": "x y"}"#, "]".repeat(70));
        let sc = scan(&deep);
        assert_eq!(sc.status, Status::Valid);
        let s = deep.find(" y").unwrap();
        assert_ne!(sc.flags[s] & flag::NEXT_TO_SPACE, 0);
        assert_ne!(sc.flags[s] & flag::NESTED, 0);
        assert_eq!(scan(&format!("{}]", "[".repeat(70) + &"]".repeat(69) + "}")).status, Status::Invalid);
    }

    #[test]
    fn boundaries_follow_utf8() {
        let d = r#"{"c": "é"}"#;
        let sc = scan(d);
        let e = d.find('é').unwrap();
        assert_ne!(sc.flags[e] & flag::BOUNDARY, 0);
        assert_eq!(sc.flags[e + 1] & flag::BOUNDARY, 0);
        assert_ne!(sc.flags[e + 2] & flag::BOUNDARY, 0);
    }
}
