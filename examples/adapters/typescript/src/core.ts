// The core: provider-neutral events in, outcomes out. This is the part your library
// replaces (see README.md).

import { Json, schemaErrors, strictParse } from "./json";

/** Fails the whole turn. `cls` is one of the protocol's error classes. */
export class TurnError extends Error {
  constructor(
    readonly cls: string,
    readonly detail: string,
  ) {
    super(`${cls}: ${detail}`);
  }
}

export const malformed = (detail: string) => new TurnError("malformed", detail);

/** A provider-neutral event, as the protocol's events level sends it. */
export type NeutralEvent =
  | { type: "text_delta"; text: string }
  | { type: "call_start"; index: number; call_id: string; name: string }
  | { type: "args_delta"; index: number; fragment: string }
  | { type: "call_stop"; index: number; arguments?: string | null }
  | { type: "stop"; reason: string }
  | { type: "error"; message: string }
  | { type: "ping" };

export interface Tool {
  name: string;
  schema?: unknown;
}

export type Outcome =
  | { outcome: "dispatchable"; call_id: string; name: string; args: Json }
  | { outcome: "schema_error"; call_id: string; name: string; args: Json; errors: string[] }
  | { outcome: "failed"; reason: "abandoned" | "truncated" | "unparseable"; call_id: string; name: string; raw: string };

export type Slot = { slot: "text"; text: string } | { slot: "call"; call_id: string };

/**
 * Where an accumulator reports. The protocol loop stamps everything with the number of units
 * delivered to the stream so far, and whether it came from `finish`.
 */
export class Emit {
  units = 0;
  atFinish = false;
  outcomes: (Outcome & { units: number; at_finish: boolean })[] = [];
  textPieces: string[] = [];
  slots: Slot[] | undefined = undefined;

  outcome(o: Outcome): void {
    this.outcomes.push({ ...o, units: this.units, at_finish: this.atFinish });
  }
  text(text: string): void {
    this.textPieces.push(text);
  }
  layout(slots: Slot[]): void {
    this.slots = slots;
  }
}

/** Stop reasons that say the output was cut: nothing of such a turn may be dispatched. */
const TRUNCATING = new Set(["max_tokens", "refusal", "length", "content_filter", "incomplete"]);

interface CallBuffer {
  index: number;
  callId: string;
  name: string;
  parts: string[];
  stopped: boolean;
}

/**
 * One stream's accumulator: buffers keyed by the positional index with the call id kept
 * beside them, fragments appended as opaque text in arrival order (nothing parsed, decoded or
 * trimmed), protocol errors for an unannounced index, a second announcement and a fragment
 * after stop, one strict parse per buffer at the end of the stream.
 */
export class Core {
  private schemas = new Map<string, unknown>();
  private calls: CallBuffer[] = [];
  private stop: string | null = null;
  private slots: Slot[] = [];

  constructor(tools: Tool[], validate: boolean) {
    if (validate) {
      for (const t of tools) {
        if (t.schema !== undefined && t.schema !== null && !this.schemas.has(t.name)) this.schemas.set(t.name, t.schema);
      }
    }
  }

  private call(index: number): CallBuffer | undefined {
    for (let k = this.calls.length - 1; k >= 0; k--) if (this.calls[k].index === index) return this.calls[k];
    return undefined;
  }

  onEvent(e: NeutralEvent, out: Emit): void {
    switch (e.type) {
      case "text_delta": {
        out.text(e.text);
        const last = this.slots[this.slots.length - 1];
        if (last !== undefined && last.slot === "text") last.text += e.text;
        else this.slots.push({ slot: "text", text: e.text });
        return;
      }
      case "call_start": {
        if (this.stop !== null) throw new TurnError("fragment_after_stop", `call ${e.index} announced after the stop`);
        if (this.call(e.index) !== undefined) {
          throw new TurnError("duplicate_announcement", `index ${e.index} announced twice (as ${e.call_id})`);
        }
        this.slots.push({ slot: "call", call_id: e.call_id });
        this.calls.push({ index: e.index, callId: e.call_id, name: e.name, parts: [], stopped: false });
        return;
      }
      case "args_delta": {
        const call = this.call(e.index);
        if (call === undefined) throw new TurnError("unannounced_index", `fragment for unannounced index ${e.index}`);
        if (call.stopped || this.stop !== null) {
          throw new TurnError("fragment_after_stop", `fragment for index ${e.index} after its stop`);
        }
        call.parts.push(e.fragment); // append only: no trim, no parse, no decode
        return;
      }
      case "call_stop": {
        const call = this.call(e.index);
        if (call === undefined) throw new TurnError("unannounced_index", `stop for unannounced index ${e.index}`);
        if (call.stopped) throw new TurnError("fragment_after_stop", `index ${e.index} stopped twice`);
        if (e.arguments !== undefined && e.arguments !== null && e.arguments !== call.parts.join("")) {
          throw new TurnError("done_mismatch", `index ${e.index}: the terminal's arguments differ from the fragments`);
        }
        call.stopped = true;
        return;
      }
      case "stop":
        if (this.stop !== null) throw new TurnError("fragment_after_stop", "a second stop reason");
        this.stop = e.reason;
        return;
      default:
        // error and ping: the stream ends (or goes on) and finish accounts for live calls.
        return;
    }
  }

  private judge(call: CallBuffer): Outcome {
    const raw = call.parts.join("");
    const failed = (reason: "abandoned" | "truncated" | "unparseable"): Outcome => ({
      outcome: "failed",
      reason,
      call_id: call.callId,
      name: call.name,
      raw,
    });
    // Without the stop reason the turn may yet have been cut: never dispatch.
    if (this.stop === null) return failed("abandoned");
    if (TRUNCATING.has(this.stop)) return failed("truncated");
    let args: Json;
    if (raw === "") {
      args = new Map(); // a call with no argument bytes takes no arguments
    } else {
      try {
        args = strictParse(raw);
      } catch {
        return failed("unparseable");
      }
    }
    const schema = this.schemas.get(call.name);
    const errors = schema === undefined ? [] : schemaErrors(schema, args);
    if (errors.length > 0) return { outcome: "schema_error", call_id: call.callId, name: call.name, args, errors };
    return { outcome: "dispatchable", call_id: call.callId, name: call.name, args };
  }

  finish(_end: string, out: Emit): void {
    for (const call of this.calls) out.outcome(this.judge(call));
    out.layout(this.slots);
  }
}
