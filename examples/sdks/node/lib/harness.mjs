// The toolcert subprocess protocol (docs/PROTOCOL.md, version 1) for adapters that drive a
// real SDK client at the `bytes` level, and the injected `fetch` that feeds the client the
// harness's exact transport chunks.
//
// One SDK module plugs in through `serve({implementation, begin, classify})`:
//
//   begin(ctx) is called once per stream of a case, with a fresh client to make. ctx has
//     fetch     the `fetch` to give the client: its one response's body is a ReadableStream
//               that yields exactly the harness's chunks, one chunk per read, when asked
//     tools     the stream's tools [{name, schema?}]
//     dialect   the configured dialect
//     text(s)   report prose the SDK handed its caller while streaming
//     stamp()   {units, at_finish} now: chunks delivered so far, and whether the stream ended
//   and returns {done, map, cancel}: `done` is the SDK's own promise of its final result,
//   which rejects with the SDK's exception (a turn error); `map(result)` turns that result
//   into {outcomes, layout?, stop?} (outcomes may carry their own stamps, otherwise they are
//   stamped when `done` resolved). `map` is the adapter's code, run apart from the SDK's
//   promise, so an exception in it is the adapter's: the stream's crash, with its stack
//   (SUBJECT-CRASH), never a turn error. `stop` is what the SDK's stop signal (stop_reason,
//   finish_reason, response.status) says: "complete", "truncated" or "abandoned".
//   `cancel()` cancels the request the way a caller does (the `cancel` ending).
//
// The caller policy (docs/CERTIFICATION.md, "Caller policies"): `--policy as-handed-over`
// (the default, or TOOLCERT_POLICY) dispatches every call the final result offers unless
// the SDK raised or marked that very call; `--policy documented` also makes the check the
// SDK's documentation tells a caller to make before running tools: when `stop` is not
// "complete", every call offered for dispatch is `failed` (`truncated` or `abandoned`).
// The policy is declared in the handshake (`implementation.policy`).
//
// Nothing here reads the SSE bytes: the client does.

import * as readline from "node:readline";
import { appendFileSync, readFileSync } from "node:fs";

import { encode } from "./json.mjs";
import { failed } from "./outcomes.mjs";

const PROTOCOL_VERSION = 1;

/** How long a client may take to ask for the next chunk before it is pushed anyway. */
const DEMAND_WAIT_MS = 250;
/** How long a client may take to settle once its stream has ended. */
const SETTLE_WAIT_MS = 4000;

export const POLICIES = ["as-handed-over", "documented"];

// Every wire behaviour of the server profiles (docs/SPEC.md, "Server profiles"; the same list
// as toolcert-adapter's QUIRKS, kept equal by tests/profiles.rs). An SDK reads whatever bytes
// come, so an adapter declares them all and is certified in every profile of its dialects.
export const QUIRKS = Object.freeze([
  "chat_index_zero",
  "chat_repeat_fields",
  "chat_repeat_id",
  "chat_empty_continuations",
  "chat_no_index",
  "chat_whole_calls",
  "chat_sparse_index",
  "chat_split_entries",
  "chat_repeat_on_finish",
  "chat_content_filters",
  "chat_late_name",
  "responses_done_only",
  "responses_rotating_item_id",
  "responses_hosted_items",
  "anthropic_input_in_start",
  "anthropic_content_in_start",
  "gemini_partial_args",
  "hostile",
]);

/** `--policy NAME` on the command line, else TOOLCERT_POLICY, else `as-handed-over`. */
export function policyFrom(argv = process.argv.slice(2)) {
  let policy = process.env.TOOLCERT_POLICY || "as-handed-over";
  const i = argv.indexOf("--policy");
  if (i >= 0) policy = argv[i + 1] ?? "";
  if (!POLICIES.includes(policy)) {
    process.stderr.write(`unknown caller policy ${JSON.stringify(policy)} (one of ${POLICIES.join(", ")})\n`);
    process.exit(2);
  }
  return policy;
}

/** The version of an installed package, read at run time. */
export function packageVersion(name) {
  const url = new URL(`../node_modules/${name}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(url, "utf8")).version;
}

/** Marks the error our fetch body raises for the `disconnect` ending. */
export const DISCONNECT = Symbol.for("toolcert.disconnect");

/** What the SDK's own code threw while the adapter read its result (a getter of the result,
 * such as @anthropic-ai/sdk's lazily parsed `input`): the SDK failing the turn, not the
 * adapter. */
export class SdkRaised extends Error {
  constructor(cause) {
    super(String(cause));
    this.sdkCause = cause;
  }
}

/** Reads a value from the SDK's result; an exception there is the SDK's (`SdkRaised`). */
export function sdkGet(read) {
  try {
    return read();
  } catch (e) {
    throw new SdkRaised(e);
  }
}

// TOOLCERT_ADAPTER_TRACE=FILE appends timings and waits to FILE (toolcert keeps stderr).
const TRACE = process.env.TOOLCERT_ADAPTER_TRACE;
const trace = (m) => TRACE && appendFileSync(TRACE, `[${process.pid}] ${m}\n`);

const flush = () => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * One response body, fed chunk by chunk. highWaterMark 0: `pull` runs only when the client
 * has a read pending, so a chunk is pushed when the client asks for it, and every chunk is
 * one read (chunk boundaries exactly as the harness cut them).
 */
class Feed {
  constructor() {
    this.demand = false;
    this.closed = false;
    this.requests = 0;
    this.wakers = [];
    this.body = new ReadableStream(
      {
        start: (c) => {
          this.ctrl = c;
        },
        pull: () => {
          this.demand = true;
          this.wake();
        },
        cancel: () => {
          this.closed = true;
          this.wake();
        },
      },
      { highWaterMark: 0 },
    );
    this.fetch = async (_input, init) => {
      this.requests += 1;
      if (this.requests > 1) throw new TypeError("toolcert: one response per stream (a second request was made)");
      const signal = init?.signal;
      if (signal) {
        // As undici does: aborting the request errors the body being read.
        const onAbort = () =>
          this.fail(signal.reason ?? new DOMException("This operation was aborted", "AbortError"));
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      }
      return new Response(this.body, { status: 200, headers: { "content-type": "text/event-stream" } });
    };
  }

  wake() {
    const w = this.wakers;
    this.wakers = [];
    for (const f of w) f();
  }

  /** Resolves when the client asks for data, stops reading, or `ms` pass. */
  async wanted(ms, settled) {
    if (this.demand || this.closed) return true;
    let timer;
    const asked = new Promise((resolve) => this.wakers.push(() => resolve(true)));
    const late = new Promise((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    const ok = await Promise.race([asked, late, settled.then(() => true)]);
    clearTimeout(timer);
    return ok;
  }

  push(bytes) {
    if (this.closed) return;
    this.demand = false;
    try {
      this.ctrl.enqueue(bytes);
    } catch {
      this.closed = true; // the client errored or cancelled the body
    }
  }

  close() {
    if (this.closed) return;
    this.closed = true;
    try {
      this.ctrl.close();
    } catch {
      // already errored or cancelled
    }
  }

  fail(error) {
    if (this.closed) return;
    this.closed = true;
    try {
      this.ctrl.error(error);
    } catch {
      // already closed
    }
  }
}

function bytesOf(p) {
  if (typeof p.text === "string") return new Uint8Array(Buffer.from(p.text, "utf8"));
  return new Uint8Array(Buffer.from(p.bytes ?? "", "base64"));
}

function describe(e) {
  if (e instanceof Error) return e.stack ?? `${e.name}: ${e.message}`;
  try {
    return typeof e === "object" ? JSON.stringify(e) : String(e);
  } catch {
    return String(e);
  }
}

/** First line of an exception, for a turn error's detail. */
export function summary(e) {
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? ` (cause: ${e.cause.name}: ${e.cause.message})` : "";
    return `${e.constructor?.name ?? e.name}: ${e.message}`.split("\n")[0].slice(0, 400) + cause;
  }
  return describe(e).slice(0, 400);
}

/** Error classes every adapter shares: our disconnect, and an abort, end the stream early. */
export function commonClass(e) {
  // The SDKs wrap the body's error (`OpenAIError: terminated`, cause `TypeError: terminated`).
  for (let x = e, depth = 0; x && depth < 5; x = x.cause, depth++) {
    if (x[DISCONNECT]) return "incomplete";
    if (x.name === "AbortError" || x.constructor?.name === "APIUserAbortError") return "incomplete";
  }
  return null;
}

/** One stream of a case: a fresh client, fed its units in the case's order. */
class StreamRun {
  constructor(stream, sdk, config) {
    this.units = stream.units;
    this.end_ = stream.end ?? "eof";
    this.delivered = 0;
    this.ended = false;
    this.stopped = false;
    this.pieces = [];
    this.feed = new Feed();
    this.patient = true;
    this.sdk = sdk;
    const ctx = {
      fetch: this.feed.fetch,
      tools: stream.tools ?? [],
      dialect: config.dialect,
      text: (s) => {
        if (typeof s === "string") this.pieces.push(s);
      },
      stamp: () => this.stamp(),
    };
    this.policy = config.policy;
    const handle = sdk.begin(ctx);
    this.cancel = handle.cancel;
    this.map = handle.map ?? ((v) => v);
    this.settled = null;
    this.settledPromise = handle.done.then(
      (value) => {
        this.settled = { ok: value, at: this.stamp() };
      },
      (error) => {
        this.settled = { error, at: this.stamp() };
      },
    );
  }

  stamp() {
    return { units: this.delivered, at_finish: this.ended };
  }

  async deliver(k) {
    if (this.patient && !(await this.feed.wanted(DEMAND_WAIT_MS, this.settledPromise))) {
      this.patient = false;
      trace(`no read asked for within ${DEMAND_WAIT_MS} ms before chunk ${k + 1}: pushing without waiting from now on`);
    }
    this.delivered += 1;
    this.feed.push(bytesOf(this.units[k]));
    await flush();
    if (this.settled?.error !== undefined) this.stopped = true;
  }

  async finish() {
    if (this.patient) await this.feed.wanted(DEMAND_WAIT_MS, this.settledPromise);
    this.ended = true;
    switch (this.end_) {
      case "disconnect": {
        const e = new TypeError("terminated", { cause: new Error("other side closed") });
        e[DISCONNECT] = true;
        this.feed.fail(e);
        break;
      }
      case "cancel":
        this.cancel();
        this.feed.fail(new DOMException("This operation was aborted", "AbortError"));
        break;
      default:
        this.feed.close();
    }
    let timer;
    await Promise.race([
      this.settledPromise,
      new Promise((resolve) => {
        timer = setTimeout(resolve, SETTLE_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    await flush();
    trace(`stream ended (${this.end_}) after ${this.delivered} chunks: ${this.settled === null ? "not settled" : this.settled.error !== undefined ? "rejected" : "resolved"}`);
  }

  result() {
    const r = { outcomes: [], text: this.pieces.join("") };
    const s = this.settled;
    if (s === null) {
      r.crash = `the client neither returned nor threw within ${SETTLE_WAIT_MS} ms of the stream's end (${this.end_})`;
      return r;
    }
    if (s.error !== undefined) {
      const extra = this.sdk.partial?.(s.error) ?? [];
      r.outcomes = extra.map((o) => ({ ...o, units: o.units ?? s.at.units, at_finish: o.at_finish ?? s.at.at_finish }));
      r.error = { class: this.sdk.classify(s.error), detail: summary(s.error), units: s.at.units, at_finish: s.at.at_finish };
      return r;
    }
    let v;
    try {
      v = this.map(s.ok);
    } catch (e) {
      if (e instanceof SdkRaised) {
        const cause = e.sdkCause;
        r.error = { class: this.sdk.classify(cause), detail: summary(cause), units: s.at.units, at_finish: s.at.at_finish };
        return r;
      }
      r.crash = `the adapter failed mapping the SDK's result: ${describe(e)}`;
      return r;
    }
    const withheld = this.policy === "documented" && v.stop !== undefined && v.stop !== "complete" ? v.stop : null;
    r.outcomes = (v.outcomes ?? []).map((o) => {
      const raw = o.raw_text;
      delete o.raw_text;
      // The documented caller does not run the calls of a turn its stop signal says is
      // unfinished: each call offered for dispatch, or unparseable (the check comes first), is
      // reported failed for that reason, with the SDK's argument text when it keeps one. A call
      // the SDK itself marked abandoned or truncated keeps its reason.
      const offered = o.outcome === "dispatchable" || (o.outcome === "failed" && o.reason === "unparseable");
      if (withheld === null || !offered) return o;
      return { ...failed(withheld, o.call_id, o.name, raw ?? o.raw ?? ""), units: o.units, at_finish: o.at_finish };
    });
    r.outcomes = r.outcomes.map((o) => ({ ...o, units: o.units ?? s.at.units, at_finish: o.at_finish ?? s.at.at_finish }));
    if (v.layout !== undefined) r.layout = v.layout;
    if (v.error !== undefined) {
      const at = v.error.at ?? s.at;
      r.error = { class: v.error.class, detail: v.error.detail, units: at.units, at_finish: at.at_finish };
    }
    return r;
  }
}

async function runCase(c, sdk, config) {
  const runs = c.streams.map((stream) => new StreamRun(stream, sdk, config));
  for (const [s, k] of c.order) {
    const run = runs[s];
    if (run.stopped) continue;
    if (k < run.units.length) await run.deliver(k);
    else {
      run.stopped = true;
      await run.finish();
    }
  }
  return runs.map((r) => r.result());
}

/** Runs the protocol loop on stdin/stdout for one SDK module. */
export function serve(sdk) {
  const policy = policyFrom();
  const implementation = {
    language: "javascript",
    language_version: process.version,
    levels: ["bytes"],
    quirks: QUIRKS,
    capabilities: [],
    ...sdk.implementation,
    policy,
  };
  let config = null;
  const send = (message) => process.stdout.write(encode(message) + "\n");
  process.on("unhandledRejection", (e) => {
    process.stderr.write(`unhandled rejection (ignored): ${summary(e)}\n`);
  });
  const queue = [];
  let busy = false;
  const handle = async (line) => {
    const request = JSON.parse(line);
    switch (request.cmd) {
      case "start":
        if (request.version !== PROTOCOL_VERSION) {
          process.stderr.write(`toolcert speaks protocol ${request.version}, this adapter ${PROTOCOL_VERSION}\n`);
        }
        send({ version: PROTOCOL_VERSION, implementation });
        return;
      case "configure": {
        const { level, dialect } = request;
        if (level !== "bytes") {
          send({ ok: false, reason: `this adapter drives the real client, which only reads bytes (asked for ${JSON.stringify(level)})` });
          return;
        }
        if (!implementation.dialects.includes(dialect)) {
          send({ ok: false, reason: `${implementation.name} does not speak ${JSON.stringify(dialect)}` });
          return;
        }
        config = { level, dialect, schema: request.profile?.schema ?? false, policy };
        send({ ok: true });
        return;
      }
      case "run": {
        if (config === null) {
          send({ seq: request.seq, errored: true, context: { message: "run before configure" } });
          return;
        }
        const why = sdk.refuse?.(request.case, config);
        if (why) {
          send({ seq: request.seq, skipped: true, reason: why });
          return;
        }
        try {
          const t0 = performance.now();
          // elapsed_ns: the SDK's run over the case's bytes alone (toolcert bench prices it),
          // not decoding the request or writing the reply. CPU time, not the wall clock: the
          // harness's idle waits for a read, and other work preempting the process, are not
          // the SDK's cost.
          const started = process.cpuUsage();
          const results = await runCase(request.case, sdk, config);
          const used = process.cpuUsage(started);
          const elapsed = (used.user + used.system) * 1000;
          trace(`run ${request.seq}: ${(performance.now() - t0).toFixed(1)} ms`);
          send({ seq: request.seq, results, elapsed_ns: elapsed });
        } catch (e) {
          send({ seq: request.seq, errored: true, context: { message: String(e), traceback: describe(e) } });
        }
        return;
      }
      case "stop":
        process.stdout.write("", () => process.exit(0));
        return;
      default:
        process.stderr.write(`unknown command ${JSON.stringify(request.cmd)}\n`);
        send({ seq: request.seq, errored: true, context: { message: `unknown command ${JSON.stringify(request.cmd)}` } });
    }
  };
  const pump = async () => {
    if (busy) return;
    busy = true;
    while (queue.length > 0) {
      const line = queue.shift();
      try {
        await handle(line);
      } catch (e) {
        process.stderr.write(`adapter failure: ${describe(e)}\n`);
      }
    }
    busy = false;
  };
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    queue.push(line);
    pump();
  });
  lines.on("close", () => {
    const wait = () => (busy || queue.length ? setTimeout(wait, 10) : process.exit(0));
    wait();
  });
}

// ---- helpers the SDK modules share ----

// The stop signals of each dialect (docs/SPEC.md section 2): what the documented caller
// reads. Missing, or a value it cannot read as either, is "abandoned": it runs nothing.
const ANTHROPIC_COMPLETE = new Set(["tool_use", "end_turn", "stop_sequence", "pause_turn"]);
const ANTHROPIC_CUT = new Set(["max_tokens", "refusal", "model_context_window_exceeded"]);
const CHAT_COMPLETE = new Set(["tool_calls", "stop", "function_call"]);
const CHAT_CUT = new Set(["length", "content_filter"]);
const signal = (complete, cut) => (v) => (complete.has(v) ? "complete" : cut.has(v) ? "truncated" : "abandoned");
export const anthropicStop = signal(ANTHROPIC_COMPLETE, ANTHROPIC_CUT);
export const chatStop = signal(CHAT_COMPLETE, CHAT_CUT);

/** Tool names once each, with the first schema given for each. */
export function uniqueTools(tools) {
  const seen = new Map();
  for (const t of tools) if (!seen.has(t.name)) seen.set(t.name, t.schema ?? null);
  return [...seen.entries()].map(([name, schema]) => ({ name, schema }));
}

export { sleep };
