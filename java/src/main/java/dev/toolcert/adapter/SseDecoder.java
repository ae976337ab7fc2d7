package dev.toolcert.adapter;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * SSE: raw bytes in transport chunks to SSE events, by the WHATWG {@code text/event-stream} rules,
 * with an incremental, strict UTF-8 decoder: what lifts a wire-level accumulator to the bytes level.
 *
 * <p>Lines are split on the bytes CR, LF and CRLF (a CRLF split across chunks is one line end);
 * each line's bytes are decoded as UTF-8 as they come, so a character split across chunks survives
 * and an invalid byte is a {@code malformed} turn error from the chunk that holds it, never U+FFFD.
 * Events come out as {@code {"event", "data", "id"}} maps, as the wire level delivers them.
 */
public final class SseDecoder {
    private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    private ByteBuffer pending = ByteBuffer.allocate(0); // an incomplete character's bytes
    private long offset;
    private boolean firstLine = true;
    private boolean afterCr;
    private final StringBuilder line = new StringBuilder();
    private final List<String> data = new ArrayList<>();
    private boolean hasData;
    private String event = "";
    private String id;

    /** Decodes one chunk, returning the events it completed. */
    public List<Map<String, Object>> feed(byte[] chunk) throws TurnError {
        List<Map<String, Object>> out = new ArrayList<>();
        int i = 0;
        int n = chunk.length;
        while (i < n) {
            if (afterCr) {
                afterCr = false;
                if (chunk[i] == '\n') { // the LF of a CRLF whose CR ended the last line
                    i++;
                    continue;
                }
            }
            int j = i;
            while (j < n && chunk[j] != '\r' && chunk[j] != '\n') {
                j++;
            }
            append(chunk, i, j);
            if (j == n) {
                break;
            }
            afterCr = chunk[j] == '\r';
            endLine(j, out);
            i = j + 1;
        }
        offset += n;
        return out;
    }

    /** The stream has ended: an unterminated event is discarded; a character left incomplete is malformed. */
    public void finish() throws TurnError {
        if (pending.hasRemaining()) {
            throw TurnError.malformed("the event stream ends inside a UTF-8 character");
        }
    }

    private void append(byte[] chunk, int start, int end) throws TurnError {
        if (start == end) {
            return;
        }
        ByteBuffer in = ByteBuffer.allocate(pending.remaining() + end - start);
        in.put(pending).put(chunk, start, end - start).flip();
        CharBuffer chars = CharBuffer.allocate(in.remaining());
        CoderResult r = utf8.decode(in, chars, false);
        if (r.isError()) {
            throw TurnError.malformed("invalid UTF-8 near byte " + (offset + start) + " of the event stream");
        }
        pending = in.slice();
        chars.flip();
        line.append(chars);
    }

    private void endLine(int at, List<Map<String, Object>> out) throws TurnError {
        if (pending.hasRemaining()) { // a character cut short by the line end is invalid
            throw TurnError.malformed("invalid UTF-8 before byte " + (offset + at) + " of the event stream");
        }
        utf8.reset();
        String text = line.toString();
        line.setLength(0);
        if (firstLine) {
            firstLine = false;
            if (text.startsWith("\uFEFF")) {
                text = text.substring(1); // a BOM at the start of the stream is skipped
            }
        }
        if (text.isEmpty()) {
            if (hasData) {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("event", event.isEmpty() ? null : event);
                e.put("data", String.join("\n", data));
                e.put("id", id);
                out.add(e);
            }
            data.clear();
            hasData = false;
            event = "";
            id = null;
            return;
        }
        if (text.charAt(0) == ':') {
            return; // a comment
        }
        int colon = text.indexOf(':');
        String name = colon < 0 ? text : text.substring(0, colon);
        String value = colon < 0 ? "" : text.substring(colon + 1);
        if (value.startsWith(" ")) {
            value = value.substring(1);
        }
        switch (name) {
            case "data" -> {
                data.add(value);
                hasData = true;
            }
            case "event" -> event = value;
            case "id" -> {
                if (value.indexOf('\0') < 0) {
                    id = value;
                }
            }
            default -> { } // retry and unknown fields are ignored
        }
    }

    /** Strict UTF-8 of a whole byte array (for payloads that must be text). */
    public static String utf8(byte[] bytes) throws CharacterCodingException {
        return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes))
                .toString();
    }
}
