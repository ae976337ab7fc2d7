/** A JSON number: its text as written (kept exactly, `encode` writes it back) and its value as a double. */
export declare class JsonNumber {
    readonly text: string;
    readonly value: number;
    constructor(text: string, value: number);
}
/** A strictly parsed JSON value: objects are Maps (so `__proto__` is just a key), numbers JsonNumbers. */
export type Json = null | boolean | string | JsonNumber | Json[] | JsonObject;
export type JsonObject = Map<string, Json>;
export declare class NotJson extends Error {}
/** serde_json refuses documents nested this deep (its recursion limit). */
export declare const MAX_DEPTH = 513;
/** Exactly one JSON document, as strictly as serde_json reads it; throws NotJson otherwise. */
export declare function strictParse(text: string): Json;
/** JSON text: JsonNumbers and bigints as written, Maps as objects, undefined fields left out. */
export declare function encode(value: unknown): string;
/** JSON equality between an argument value and a schema value: numbers by value. */
export declare function jsonEqual(a: unknown, b: unknown): boolean;
/** Validates `value` against a JSON Schema (the keywords tool schemas use); one message per violation. */
export declare function schemaErrors(schema: unknown, value: Json, path?: string): string[];

export declare const PROTOCOL_VERSION = 1;
export type Level = "events" | "wire" | "bytes";
export type Dialect = "anthropic" | "openai-chat" | "openai-responses" | "gemini";
export type ErrorClass =
    | "unannounced_index"
    | "duplicate_announcement"
    | "fragment_after_stop"
    | "done_mismatch"
    | "malformed"
    | "upstream"
    | "truncated"
    | "incomplete"
    | "limit"
    | "other";
export declare const LEVELS: readonly Level[];
export declare const DIALECTS: readonly Dialect[];
export declare const ERROR_CLASSES: readonly ErrorClass[];
/** Stop reasons that say the output was cut. */
export declare const TRUNCATING: ReadonlySet<string>;
/** How a turn can end, as an accumulator says it (`Emit.ending`). */
export type Ending = "complete" | "truncated" | "abandoned" | "errored";
export declare const ENDINGS: readonly Ending[];

/** A provider-neutral event, as the protocol's events level sends it. */
export type NeutralEvent =
    | { type: "text_delta"; text: string }
    | { type: "call_start"; index: number; call_id: string; name: string }
    | { type: "args_delta"; index: number; fragment: string }
    | { type: "call_stop"; index: number; arguments?: string | null }
    | { type: "stop"; reason: string }
    | { type: "error"; message: string }
    | { type: "ping" };
/** One SSE event, as the wire level sends it. */
export interface WireEvent {
    event?: string | null;
    data: string;
    id?: string | null;
}
export interface Tool {
    name: string;
    schema?: unknown;
}
export interface Quirks {
    chat_index_zero?: boolean;
    chat_repeat_fields?: boolean;
}
/** The setting of the last `configure`. */
export interface Config {
    level: Level;
    dialect: Dialect;
    quirks: Quirks;
    /** Validate arguments against the tool's schema (only with the `schema` capability). */
    schema: boolean;
}
export type Outcome =
    | { outcome: "dispatchable"; call_id: string; name: string; args: unknown }
    | { outcome: "schema_error"; call_id: string; name: string; args: unknown; errors: string[] }
    | { outcome: "failed"; reason: "abandoned" | "truncated" | "unparseable"; call_id: string; name: string; raw: string };
export type Slot = { slot: "text"; text: string } | { slot: "call"; call_id: string };

/** Fails the whole turn (the stream ends here). */
export declare class TurnError extends Error {
    readonly cls: ErrorClass;
    readonly detail: string;
    constructor(cls: ErrorClass, detail: string);
}
export declare function malformed(detail: string): TurnError;
/** Thrown from a factory, feed or finish: the adapter cannot run this case (a `skipped` reply). */
export declare class Skip extends Error {
    readonly reason: string;
    constructor(reason: string);
}
/** Where an accumulator reports; the loop stamps everything with when it was emitted. */
export declare class Emit {
    units: number;
    atFinish: boolean;
    outcomes: (Outcome & { units: number; at_finish: boolean })[];
    textPieces: string[];
    slots: Slot[] | undefined;
    endingSaid: { ending: Ending; stop_reason: string | null; units: number; at_finish: boolean } | undefined;
    outcome(o: Outcome): void;
    text(text: string): void;
    layout(slots: Slot[]): void;
    /**
     * Optional: how the turn ended, as your library tells its caller; `stopReason` as the
     * provider spelled it, only when the stream carried one. Judged by ACC-ENDING.
     */
    ending(ending: Ending, stopReason?: string | null): void;
}
export declare function dispatchable(callId: string, name: string, args: unknown): Outcome;
export declare function schemaError(callId: string, name: string, args: unknown, errors: Iterable<string>): Outcome;
export declare function failed(reason: "abandoned" | "truncated" | "unparseable", callId: string, name: string, raw: string): Outcome;

/** One stream's accumulator at one level. */
export interface Accumulator<U> {
    feed(unit: U, out: Emit): void;
    finish(end: string, out: Emit): void;
}
export type Factory<U> = (tools: Tool[], config: Config) => Accumulator<U>;
export type Quirk =
    | "chat_index_zero"
    | "chat_repeat_fields"
    | "chat_repeat_id"
    | "chat_empty_continuations"
    | "chat_no_index"
    | "chat_whole_calls"
    | "chat_sparse_index"
    | "chat_split_entries"
    | "chat_repeat_on_finish"
    | "chat_content_filters"
    | "chat_late_name"
    | "responses_done_only"
    | "responses_rotating_item_id"
    | "responses_hosted_items"
    | "anthropic_input_in_start"
    | "anthropic_content_in_start"
    | "gemini_partial_args"
    | "hostile";
/** Every wire behaviour of the server profiles (docs/SPEC.md, "Server profiles"). */
export declare const QUIRKS: readonly Quirk[];
/** The caps a subject may document: a stream past one may fail with a `limit` turn error. */
export interface Caps {
    /** Calls in one stream. */
    calls?: number;
    /** Bytes of one call's arguments. */
    argument_bytes?: number;
    /** Argument fragments in one stream, over all its calls. */
    fragments?: number;
    /** Nesting depth of one call's arguments (`{}` is 1). */
    depth?: number;
}
export declare const CAPS: readonly (keyof Caps)[];
export interface ServeOptions {
    name: string;
    version?: string;
    homepage?: string;
    /** Defaults to "javascript". */
    language?: string;
    events?: Factory<NeutralEvent>;
    wire?: Factory<WireEvent>;
    bytes?: Factory<Uint8Array>;
    /** The dialects the wire and bytes levels speak (default: all of `DIALECTS`). */
    dialects?: readonly Dialect[];
    /** The server profiles' wire behaviours the wire and bytes levels read (`QUIRKS`: all). */
    quirks?: readonly Quirk[];
    /** Declare the `schema` capability: only if the accumulator validates arguments. */
    schema?: boolean;
    /** The caps the SDK documents (non-negative integers), sent as `implementation.caps`. */
    caps?: Caps;
    /**
     * More objects the pollution check watches besides the built-in prototypes, by the name
     * reported (`{"OpenAI.prototype": OpenAI.prototype}`, a Map, or [name, object] pairs), or a
     * `PollutionWatch` to use as it is. Snapshotted when `serve` is called.
     */
    watch?: Record<string, object> | Map<string, object> | [string, object][] | PollutionWatch;
    input?: NodeJS.ReadableStream;
    output?: NodeJS.WritableStream;
}
/** The built-in prototypes every stream is checked against, by name. */
export declare const BUILTIN_PROTOTYPES: readonly [string, object][];
/**
 * The HOSTILE-POLLUTION check: snapshots the own properties (descriptors by identity) and the
 * [[Prototype]] of the built-in prototypes and of the objects named; `check()` lists what
 * changed since the last check and takes that as the new baseline.
 */
export declare class PollutionWatch {
    constructor(extra?: Record<string, object> | Map<string, object> | [string, object][]);
    /** The CPU time spent checking, in nanoseconds (left out of `elapsed_ns`). */
    cpuNs: number;
    readonly names: string[];
    watch(name: string, obj: object): this;
    check(): string[];
}
/** Answers toolcert's requests until `stop` or the end of input. */
export declare function serve(options: ServeOptions): Promise<number>;
export declare function runCase(
    c: { streams: { tools?: Tool[]; units: unknown[]; end?: string }[]; order: [number, number][] },
    config: Config,
    factories: Partial<Record<Level, Factory<any>>>,
    /** `memory`: the heap is sampled during the run, its most kept in `peak` (bench --bounded). */
    options?: { watch?: PollutionWatch; memory?: { peak: number } },
): unknown[];
