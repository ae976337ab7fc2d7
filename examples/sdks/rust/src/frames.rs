//! Where in the chunks genai 0.7.2 completes each SSE frame, to stamp its errors.
//!
//! genai raises most stream errors while handling one SSE frame (an event it cannot read);
//! the adapter counts the frames genai's raw-frame hook saw and needs the transport chunk that
//! completed the last of them. That depends on how genai cuts the body into frames, so this
//! follows `genai::webc::web_stream` (`StreamMode::Sse`) step for step: decode each chunk's
//! complete UTF-8 prefix (carrying an incomplete character over), prepend the previous
//! partial frame, turn CRLF and CR into LF, split at `\n\n`, drop empty pieces, keep the last
//! piece as the new partial; at the end of the body a non-empty partial is one more frame.
//!
//! It assumes genai read the chunks as they were sent. Over loopback TCP a chunk may arrive
//! in several reads (never merged with the next one: hyper reads chunked bodies frame by
//! frame), which moves a frame's end only where genai's CR handling depends on the cut.

/// For each frame genai makes of `chunks`, the index of the chunk that completes it; `None`
/// for a last frame completed only by the end of the body. Stops at invalid UTF-8, where
/// genai fails the stream.
pub fn frame_ends(chunks: &[Vec<u8>]) -> Vec<Option<usize>> {
    let mut ends = Vec::new();
    let mut carry: Vec<u8> = Vec::new();
    let mut partial: Option<String> = None;
    for (i, chunk) in chunks.iter().enumerate() {
        let mut raw = std::mem::take(&mut carry);
        raw.extend_from_slice(chunk);
        let valid = match std::str::from_utf8(&raw) {
            Ok(_) => raw.len(),
            Err(e) if e.error_len().is_some() => return ends,
            Err(e) => e.valid_up_to(),
        };
        carry = raw[valid..].to_vec();
        let text = std::str::from_utf8(&raw[..valid]).expect("checked above");
        let full = format!("{}{text}", partial.take().unwrap_or_default());
        let normalized = full.replace("\r\n", "\n").replace('\r', "\n");
        let mut pieces: Vec<&str> = normalized.split("\n\n").collect();
        let last = pieces.pop().unwrap_or_default();
        ends.extend(pieces.iter().filter(|p| !p.is_empty()).map(|_| Some(i)));
        partial = Some(last.to_string());
    }
    if partial.is_some_and(|p| !p.is_empty()) && carry.is_empty() {
        ends.push(None);
    }
    ends
}

/// The chunk in which the body stops being UTF-8 (where genai fails the stream), if it does.
pub fn invalid_utf8_chunk(chunks: &[Vec<u8>]) -> Option<usize> {
    let all = chunks.concat();
    let e = std::str::from_utf8(&all).err()?;
    // An incomplete character at the very end is only found at the end of the body.
    let bad = e.valid_up_to() + e.error_len()? - 1;
    let mut start = 0;
    for (i, c) in chunks.iter().enumerate() {
        // genai only learns a sequence is invalid once the byte that breaks it has arrived.
        if bad < start + c.len() {
            return Some(i);
        }
        start += c.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks(parts: &[&[u8]]) -> Vec<Vec<u8>> {
        parts.iter().map(|p| p.to_vec()).collect()
    }

    #[test]
    fn frames_end_in_the_chunk_with_their_blank_line() {
        let c = chunks(&[b"data: a\n", b"\ndata: b\n\nda", b"ta: c\n\n", b"data: d"]);
        assert_eq!(frame_ends(&c), [Some(1), Some(1), Some(2), None]);
    }

    #[test]
    fn a_cr_at_a_chunk_end_is_already_a_newline_when_the_lf_comes() {
        // genai turns the lone `\r` into `\n` before the `\n` arrives: `a\n` + `\n` is a blank
        // line, so `data: b` is a second frame (a correct reader makes one event of both).
        let c = chunks(&[b"data: a\r", b"\ndata: b\r\n\r\n"]);
        assert_eq!(frame_ends(&c), [Some(1), Some(1)]);
    }

    #[test]
    fn invalid_utf8_is_found_in_its_chunk() {
        let c = chunks(&[b"data: \xc3", b"\xa9\n\n", b"data: \xff\n\n"]);
        assert_eq!(invalid_utf8_chunk(&c), Some(2));
        assert_eq!(frame_ends(&c), [Some(1)]);
        assert_eq!(invalid_utf8_chunk(&chunks(&[b"data: \xc3"])), None);
    }
}
