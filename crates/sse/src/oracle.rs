//! The decoder as it was before it handed out events in place ([`crate::Decoder::pull`]):
//! kept as the test oracle the current one is compared with, over arbitrary byte streams
//! cut at arbitrary points (`tests.rs`).

use super::{find_eol, plain_ascii, SseError, SseEvent, Unit, BOM};

#[derive(Debug)]
pub struct OldDecoder {
    limit: usize,
    /// Offset (in the stream) of the next byte to be read.
    offset: u64,
    /// Still looking at the first bytes for a BOM; `bom_held` of them matched so far.
    at_start: bool,
    bom_held: usize,
    /// The last line ended with CR: an LF next (even in the next chunk) ends nothing.
    after_cr: bool,
    /// The current line's bytes, when it spans chunks.
    line: Vec<u8>,
    /// How much of `line` is known to be UTF-8 (the rest is an incomplete character).
    checked: usize,
    line_start: u64,
    /// Where the current event's first line began; `None` until it has one.
    event_start: Option<u64>,
    data: String,
    /// Some `data` line arrived since the last dispatch (the data buffer is non-empty).
    has_data: bool,
    event: String,
    id: Option<String>,
    failed: Option<SseError>,
}

impl Default for OldDecoder {
    fn default() -> Self {
        OldDecoder::new()
    }
}

impl OldDecoder {
    /// A decoder with the default limit ([`DEFAULT_LIMIT`]).
    pub fn new() -> OldDecoder {
        OldDecoder::with_limit(super::DEFAULT_LIMIT)
    }

    /// A decoder that refuses any line, or any event's data, larger than `max_event_bytes`.
    pub fn with_limit(max_event_bytes: usize) -> OldDecoder {
        OldDecoder {
            limit: max_event_bytes,
            offset: 0,
            at_start: true,
            bom_held: 0,
            after_cr: false,
            line: Vec::new(),
            checked: 0,
            line_start: 0,
            event_start: None,
            data: String::new(),
            has_data: false,
            event: String::new(),
            id: None,
            failed: None,
        }
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads one chunk of the stream.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if self.continues_line(chunk) {
            return Ok(());
        }
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.feed_inner(chunk, out);
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    /// The stream has ended. An event without its terminating blank line is discarded (as
    /// the specification says); a character left incomplete is an error.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.finish_inner(out);
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    /// The commonest chunk of a stream cut every few bytes, taken whole when it is one: a
    /// short piece of ASCII with no line end, which only extends the current line. Anything
    /// else (a line end, a byte of a longer character, a line at the limit, the start of the
    /// stream, a failed decoder) is left to the general path, untouched.
    #[inline]
    fn continues_line(&mut self, chunk: &[u8]) -> bool {
        let plain = !chunk.is_empty()
            && chunk.len() < 64
            && !self.at_start
            && self.failed.is_none()
            && self.checked == self.line.len()
            && self.line.len() + chunk.len() <= self.limit
            && !(self.after_cr && chunk[0] == b'\n')
            && plain_ascii(chunk);
        if plain {
            self.after_cr = false;
            self.line.extend_from_slice(chunk);
            self.checked = self.line.len();
            self.offset += chunk.len() as u64;
        }
        plain
    }

    fn feed_inner(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if self.at_start {
            // The BOM may itself be split across chunks: hold its bytes until it is decided.
            let mut i = 0;
            while self.bom_held < BOM.len() && i < chunk.len() {
                if chunk[i] != BOM[self.bom_held] {
                    self.at_start = false;
                    let held = std::mem::take(&mut self.bom_held);
                    self.process(&BOM[..held], out)?;
                    break;
                }
                self.bom_held += 1;
                i += 1;
            }
            if self.at_start && self.bom_held == BOM.len() {
                self.at_start = false;
                self.bom_held = 0;
                self.offset += BOM.len() as u64;
                self.line_start = self.offset;
            }
            chunk = &chunk[i..];
            if self.at_start {
                return Ok(());
            }
        }
        self.process(chunk, out)
    }

    fn finish_inner(&mut self, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if self.at_start && self.bom_held > 0 {
            // A stream that is only the start of a BOM: those bytes are an unfinished character.
            self.at_start = false;
            let held = std::mem::take(&mut self.bom_held);
            self.process(&BOM[..held], out)?;
        }
        if let Err(e) = std::str::from_utf8(&self.line[self.checked..]) {
            let at = self.line_start + (self.checked + e.valid_up_to()) as u64;
            return Err(match e.error_len() {
                Some(_) => SseError::InvalidUtf8 { offset: at },
                None => SseError::TruncatedUtf8 { offset: at },
            });
        }
        // Whatever is pending is an unterminated line or event: discarded.
        self.line.clear();
        self.checked = 0;
        self.reset_event();
        Ok(())
    }

    fn process(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = chunk;
        while !rest.is_empty() {
            if std::mem::take(&mut self.after_cr) && rest[0] == b'\n' {
                // The LF of a CRLF whose CR ended the previous line (possibly in another chunk).
                rest = &rest[1..];
                self.offset += 1;
                self.line_start = self.offset;
                continue;
            }
            match find_eol(rest) {
                Some(p) => {
                    let seg = &rest[..p];
                    self.after_cr = rest[p] == b'\r';
                    if self.line.is_empty() {
                        self.complete_line(seg, out)?;
                    } else {
                        self.append(seg)?;
                        let line = std::mem::take(&mut self.line);
                        let r = self.complete_line(&line, out);
                        self.line = line;
                        self.line.clear();
                        self.checked = 0;
                        r?;
                    }
                    self.offset += (p + 1) as u64;
                    self.line_start = self.offset;
                    rest = &rest[p + 1..];
                }
                None => {
                    self.append(rest)?;
                    self.offset += rest.len() as u64;
                    rest = &[];
                }
            }
        }
        Ok(())
    }

    /// Holds part of a line that continues in the next chunk, checking UTF-8 as it goes.
    fn append(&mut self, seg: &[u8]) -> Result<(), SseError> {
        let room = self.limit - self.line.len();
        let over = seg.len() > room;
        self.line.extend_from_slice(&seg[..seg.len().min(room)]);
        // Only what fits is checked, so the error reported does not depend on the chunking:
        // a proven UTF-8 error within the first `limit` bytes wins, then the size. A piece
        // of a line is often a few ASCII bytes, which `is_ascii` settles in a fraction of
        // what `from_utf8` takes to start.
        if self.line[self.checked..].is_ascii() {
            self.checked = self.line.len();
        } else {
            self.check_held()?;
        }
        if over {
            return Err(SseError::TooLarge { unit: Unit::Line, limit: self.limit, start: self.line_start });
        }
        Ok(())
    }

    /// Checks the held line's bytes past `checked`: an invalid sequence is an error, an
    /// incomplete character at the end waits for the next chunk.
    fn check_held(&mut self) -> Result<(), SseError> {
        match std::str::from_utf8(&self.line[self.checked..]) {
            Ok(_) => self.checked = self.line.len(),
            Err(e) => match e.error_len() {
                Some(_) => {
                    return Err(SseError::InvalidUtf8 {
                        offset: self.line_start + (self.checked + e.valid_up_to()) as u64,
                    })
                }
                None => self.checked += e.valid_up_to(),
            },
        }
        Ok(())
    }

    /// A whole line (without its line end): check it and apply it.
    fn complete_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.len() > self.limit {
            // Same rule as `append`: a UTF-8 error proven within the limit wins.
            if let Err(e) = std::str::from_utf8(&line[..self.limit]) {
                if e.error_len().is_some() {
                    return Err(SseError::InvalidUtf8 { offset: self.line_start + e.valid_up_to() as u64 });
                }
            }
            return Err(SseError::TooLarge { unit: Unit::Line, limit: self.limit, start: self.line_start });
        }
        let text = match std::str::from_utf8(line) {
            Ok(t) => t,
            // A character cut short by the line end is as invalid as a bad byte.
            Err(e) => return Err(SseError::InvalidUtf8 { offset: self.line_start + e.valid_up_to() as u64 }),
        };
        self.apply(text, out)
    }

    fn apply(&mut self, line: &str, out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            self.dispatch(out);
            return Ok(());
        }
        let start = *self.event_start.get_or_insert(self.line_start);
        if line.starts_with(':') {
            return Ok(());
        }
        let (name, value) = match line.split_once(':') {
            Some((n, v)) => (n, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match name {
            "data" => {
                if self.data.len() + value.len() + 1 > self.limit {
                    return Err(SseError::TooLarge { unit: Unit::Event, limit: self.limit, start });
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
            }
            // The specification ignores an id containing NUL.
            "id" if !value.contains('\0') => self.id = Some(value.to_owned()),
            // `retry` only matters for reconnection; unknown fields are ignored.
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            // Copied out without the LF after the last data line, so the buffer keeps its
            // capacity: taking it would leave the next event to grow a new one from empty.
            let data = self.data[..self.data.len() - 1].to_owned();
            let event = (!self.event.is_empty()).then(|| self.event.clone());
            out.push(SseEvent { event, data, id: self.id.take() });
        }
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.has_data = false;
        self.event.clear();
        self.id = None;
        self.event_start = None;
    }
}
