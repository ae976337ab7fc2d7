// A toolcert adapter template: a correct streaming tool-call accumulator, in TypeScript.
//
//     npm ci && npx tsc
//     toolcert certify --subject 'exec:node examples/adapters/typescript/dist/adapter.js'
//
// It speaks toolcert's subprocess protocol (docs/PROTOCOL.md, version 1): one JSON message
// per line on stdin, one reply per line on stdout, nothing else on stdout (log to stderr).
//
// To certify your own library, replace the accumulators `makeEvents`, `makeWire` and
// `makeBytes` hand out (see README.md); keep the protocol loop at the bottom as it is.

import * as readline from "node:readline";

import { Core, Emit, NeutralEvent, Tool, TurnError } from "./core";
import { Decoder, DIALECTS, Quirks, WireEvent } from "./dialects";
import { encode } from "./json";
import { SseDecoder } from "./sse";

const PROTOCOL_VERSION = 1;

const IMPLEMENTATION = {
  name: "toolcert-adapter-typescript",
  language: "typescript",
  version: "0.1.0",
  homepage: "https://example.invalid/toolcert/examples/adapters/typescript",
  language_version: process.version,
  levels: ["events", "wire", "bytes"],
  dialects: ["anthropic", "openai-chat", "openai-responses"],
  quirks: ["chat_index_zero"],
  capabilities: ["schema"],
};

interface Config {
  level: "events" | "wire" | "bytes";
  dialect: string;
  quirks: Quirks;
  schema: boolean;
}

/** One stream's accumulator at the configured level. */
interface Accumulator<U> {
  feed(unit: U, out: Emit): void;
  finish(end: string, out: Emit): void;
}

// ---- The three levels. Replace these with your library. ----

class EventsAccumulator implements Accumulator<NeutralEvent> {
  private core: Core;
  constructor(tools: Tool[], config: Config) {
    this.core = new Core(tools, config.schema);
  }
  feed(unit: NeutralEvent, out: Emit): void {
    this.core.onEvent(unit, out);
  }
  finish(end: string, out: Emit): void {
    this.core.finish(end, out);
  }
}

class WireAccumulator implements Accumulator<WireEvent> {
  private decoder: Decoder;
  private core: Core;
  private events: NeutralEvent[] = [];
  constructor(tools: Tool[], config: Config) {
    this.decoder = DIALECTS[config.dialect](config.quirks);
    this.core = new Core(tools, config.schema);
  }
  feed(unit: WireEvent, out: Emit): void {
    this.events.length = 0;
    this.decoder.decode(unit, this.events);
    for (const e of this.events) this.core.onEvent(e, out);
  }
  finish(end: string, out: Emit): void {
    this.core.finish(end, out);
  }
}

class BytesAccumulator implements Accumulator<Uint8Array> {
  private sse = new SseDecoder();
  private wire: WireAccumulator;
  constructor(tools: Tool[], config: Config) {
    this.wire = new WireAccumulator(tools, config);
  }
  feed(chunk: Uint8Array, out: Emit): void {
    const events: WireEvent[] = [];
    let error: unknown = null;
    try {
      this.sse.feed(chunk, events);
    } catch (e) {
      error = e;
    }
    // Events completed before a bad byte are still the stream's.
    for (const ev of events) this.wire.feed(ev, out);
    if (error !== null) throw error;
  }
  finish(end: string, out: Emit): void {
    try {
      this.sse.finish();
    } catch (e) {
      // A character cut by a dropped connection is the drop's doing.
      if (end === "eof") throw e;
    }
    this.wire.finish(end, out);
  }
}

const makeEvents = (tools: Tool[], config: Config) => new EventsAccumulator(tools, config);
const makeWire = (tools: Tool[], config: Config) => new WireAccumulator(tools, config);
const makeBytes = (tools: Tool[], config: Config) => new BytesAccumulator(tools, config);

// ---- The protocol ----

interface Payload {
  text?: string;
  bytes?: string;
}

interface RunStream {
  tools?: Tool[];
  units: unknown[];
  end?: string;
}

interface StreamResult {
  outcomes?: unknown[];
  text?: string;
  layout?: unknown;
  error?: { class: string; detail: string; units: number; at_finish: boolean };
  crash?: string;
}

function bytesOf(p: Payload): Uint8Array {
  if (typeof p.text === "string") return Buffer.from(p.text, "utf8");
  return Buffer.from(p.bytes ?? "", "base64");
}

function describe(e: unknown): string {
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

/**
 * Feeds every stream to its own fresh accumulator, step by step in the case's order:
 * `[s, k]` delivers unit k of stream s; `[s, units.length]` ends stream s. A turn error
 * ends a stream (nothing more is fed, finish is not called).
 */
function runCase(c: { streams: RunStream[]; order: [number, number][] }, config: Config): StreamResult[] {
  const make = { events: makeEvents, wire: makeWire, bytes: makeBytes }[config.level];
  const accs: (Accumulator<unknown> | null)[] = [];
  const emits: Emit[] = [];
  const results: StreamResult[] = [];
  for (const stream of c.streams) {
    emits.push(new Emit());
    const result: StreamResult = {};
    results.push(result);
    try {
      accs.push(make(stream.tools ?? [], config) as Accumulator<unknown>);
    } catch (e) {
      result.crash = describe(e);
      accs.push(null);
    }
  }
  for (const [s, k] of c.order) {
    const acc = accs[s];
    if (acc === null) continue;
    const out = emits[s];
    const units = c.streams[s].units;
    try {
      if (k < units.length) {
        out.units += 1;
        acc.feed(config.level === "bytes" ? bytesOf(units[k] as Payload) : units[k], out);
      } else {
        out.atFinish = true;
        accs[s] = null;
        acc.finish(c.streams[s].end ?? "eof", out);
      }
    } catch (e) {
      accs[s] = null;
      if (e instanceof TurnError) {
        results[s].error = { class: e.cls, detail: e.detail, units: out.units, at_finish: out.atFinish };
      } else {
        results[s].crash = describe(e);
      }
    }
  }
  results.forEach((r, s) => {
    const out = emits[s];
    r.outcomes = out.outcomes;
    r.text = out.textPieces.join("");
    if (out.slots !== undefined) r.layout = out.slots;
  });
  return results;
}

function main(): void {
  let config: Config = { level: "events", dialect: "anthropic", quirks: {}, schema: true };
  const send = (message: unknown) => process.stdout.write(encode(message) + "\n");
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    const request = JSON.parse(line);
    switch (request.cmd) {
      case "start":
        if (request.version !== PROTOCOL_VERSION) {
          process.stderr.write(`toolcert speaks protocol ${request.version}, this adapter ${PROTOCOL_VERSION}\n`);
        }
        send({ version: PROTOCOL_VERSION, implementation: IMPLEMENTATION });
        return;
      case "configure": {
        const { level, dialect } = request;
        if (!IMPLEMENTATION.levels.includes(level)) {
          send({ ok: false, reason: `level ${JSON.stringify(level)} is not supported` });
          return;
        }
        if (level !== "events" && !(dialect in DIALECTS)) {
          send({ ok: false, reason: `dialect ${JSON.stringify(dialect)} is not supported` });
          return;
        }
        config = { level, dialect, quirks: request.quirks ?? {}, schema: request.profile?.schema ?? true };
        send({ ok: true });
        return;
      }
      case "run":
        try {
          send({ seq: request.seq, results: runCase(request.case, config) });
        } catch (e) {
          send({ seq: request.seq, errored: true, context: { message: String(e), traceback: describe(e) } });
        }
        return;
      case "stop":
        lines.close();
        process.stdout.write("", () => process.exit(0));
        return;
      default:
        process.stderr.write(`unknown command ${JSON.stringify(request.cmd)}\n`);
        send({ seq: request.seq, errored: true, context: { message: `unknown command ${JSON.stringify(request.cmd)}` } });
    }
  });
}

main();
