// SSE: raw bytes in transport chunks -> SSE events, by the WHATWG text/event-stream rules.
import { malformed } from "./protocol.js";
/**
 * Incremental `text/event-stream` decoder. Lines are split on the bytes CR, LF and CRLF (a
 * CRLF split across chunks is one line end), then each line's bytes go through a streaming
 * TextDecoder, so a character split across chunks survives and an invalid byte is reported
 * from the chunk that holds it. Strict: bad UTF-8 is an error, not U+FFFD.
 */
export class SseDecoder {
    // ignoreBOM keeps a BOM in the text: only the one at the very start of the stream is
    // skipped, not one at the start of every line.
    utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    offset = 0;
    firstLine = true;
    afterCr = false;
    line = "";
    data = [];
    hasData = false;
    event = "";
    id = null;
    feed(chunk, out) {
        const n = chunk.length;
        let i = 0;
        while (i < n) {
            if (this.afterCr) {
                this.afterCr = false;
                if (chunk[i] === 0x0a) {
                    i++; // the LF of a CRLF whose CR ended the last line
                    continue;
                }
            }
            let j = i;
            while (j < n && chunk[j] !== 0x0a && chunk[j] !== 0x0d)
                j++;
            this.append(chunk, i, j);
            if (j === n)
                break;
            this.afterCr = chunk[j] === 0x0d;
            this.endLine(j, out);
            i = j + 1;
        }
        this.offset += n;
    }
    /** The stream has ended: an unterminated event is discarded; a character left incomplete
     * throws (the caller decides whether that matters). */
    finish() {
        try {
            this.utf8.decode();
        }
        catch {
            throw malformed("the event stream ends inside a UTF-8 character");
        }
    }
    append(chunk, start, end) {
        if (start === end)
            return;
        try {
            this.line += this.utf8.decode(chunk.subarray(start, end), { stream: true });
        }
        catch {
            throw malformed(`invalid UTF-8 in bytes ${this.offset + start}..${this.offset + end} of the event stream`);
        }
    }
    endLine(at, out) {
        try {
            this.line += this.utf8.decode(); // a character cut short by the line end is invalid
        }
        catch {
            throw malformed(`invalid UTF-8 before byte ${this.offset + at} of the event stream`);
        }
        let line = this.line;
        this.line = "";
        if (this.firstLine) {
            this.firstLine = false;
            if (line.startsWith("\ufeff"))
                line = line.slice(1); // a BOM at the start of the stream
        }
        if (line === "") {
            if (this.hasData)
                out.push({ event: this.event || null, data: this.data.join("\n"), id: this.id });
            this.data = [];
            this.hasData = false;
            this.event = "";
            this.id = null;
            return;
        }
        if (line.charCodeAt(0) === 0x3a)
            return; // a comment
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" "))
            value = value.slice(1);
        if (name === "data") {
            this.data.push(value);
            this.hasData = true;
        }
        else if (name === "event") {
            this.event = value;
        }
        else if (name === "id" && !value.includes("\0")) {
            this.id = value;
        }
        // retry and unknown fields are ignored
    }
}
