// A toy streaming tool-call accumulator: the library under test in the examples.
//
// It buffers argument fragments per call index and parses each buffer once the stream is
// done. `new ToolCallAccumulator({ parse, trim: true })` has the seeds' first bug: it trims
// every fragment, so a space at a fragment's edge (inside a string) vanishes.

export class ProtocolError extends Error {
    constructor(kind, message) {
        super(message);
        this.kind = kind;
    }
}

const TRUNCATING = new Set(["max_tokens", "refusal", "length", "content_filter", "incomplete"]);

export class ToolCallAccumulator {
    constructor({ parse, trim = false }) {
        this.parse = parse;
        this.trim = trim;
        this.calls = [];
        this.byIndex = new Map();
        this.stopReason = null;
    }

    start(index, id, name) {
        if (this.stopReason !== null) throw new ProtocolError("fragment_after_stop", `call ${index} after the stop`);
        if (this.byIndex.has(index)) throw new ProtocolError("duplicate_announcement", `index ${index} announced twice`);
        const call = { id, name, parts: [], closed: false, status: "abandoned", args: null };
        this.byIndex.set(index, call);
        this.calls.push(call);
    }

    open(index) {
        const call = this.byIndex.get(index);
        if (call === undefined) throw new ProtocolError("unannounced_index", `index ${index} was never announced`);
        if (call.closed || this.stopReason !== null) throw new ProtocolError("fragment_after_stop", `index ${index} is closed`);
        return call;
    }

    append(index, fragment) {
        this.open(index).parts.push(this.trim ? fragment.trim() : fragment);
    }

    close(index, args) {
        const call = this.open(index);
        if (args != null && args !== call.parts.join("")) {
            throw new ProtocolError("done_mismatch", `index ${index}: done differs from the deltas`);
        }
        call.closed = true;
    }

    stop(reason) {
        if (this.stopReason !== null) throw new ProtocolError("fragment_after_stop", "a second stop reason");
        this.stopReason = reason;
    }

    finish() {
        for (const call of this.calls) {
            call.raw = call.parts.join("");
            if (this.stopReason === null) continue; // the turn may have been cut: abandoned
            if (TRUNCATING.has(this.stopReason)) {
                call.status = "truncated";
                continue;
            }
            try {
                call.args = call.raw === "" ? {} : this.parse(call.raw);
                call.status = "ok";
            } catch {
                call.status = "unparseable";
            }
        }
        return this.calls;
    }
}
