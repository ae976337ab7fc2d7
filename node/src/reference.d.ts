import type { Accumulator, Config, Emit, Factory, NeutralEvent, Tool, WireEvent } from "./index.js";
/** The reference provider-neutral accumulator: a correct events-level accumulator. */
export declare class Core implements Accumulator<NeutralEvent> {
    constructor(tools: Tool[], config: Config);
    feed(e: NeutralEvent, out: Emit): void;
    finish(end: string, out: Emit): void;
}
/** The wire-level factory that decodes the configured dialect with the reference decoders. */
export declare function wireFromEvents(factory: Factory<NeutralEvent>): Factory<WireEvent>;
/** The bytes-level factory that decodes SSE and feeds a wire-level accumulator. */
export declare function bytesFromWire(factory: Factory<WireEvent>): Factory<Uint8Array>;
/** serve() options feeding an events-level factory (default: Core) at every level. */
export declare function referenceLevels(factory?: Factory<NeutralEvent>): {
    events: Factory<NeutralEvent>;
    wire: Factory<WireEvent>;
    bytes: Factory<Uint8Array>;
};
