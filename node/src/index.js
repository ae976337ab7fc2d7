// toolcert-adapter: write a toolcert subject in JavaScript or TypeScript in about twenty
// lines. The protocol loop (`serve`), what an accumulator reports (`Emit`, `TurnError`,
// `Skip`, the outcome constructors), strict JSON that keeps every number as written, and a
// correct reference accumulator with the dialect and SSE decoders (`toolcert-adapter/reference`).
// The `node:test` integration is `toolcert-adapter/test`.

export {
    CAPS,
    DIALECTS,
    ENDINGS,
    ERROR_CLASSES,
    LEVELS,
    PROTOCOL_VERSION,
    QUIRKS,
    TRUNCATING,
    Emit,
    Skip,
    TurnError,
    dispatchable,
    failed,
    malformed,
    runCase,
    schemaError,
    serve,
} from "./protocol.js";
export { BUILTIN_PROTOTYPES, PollutionWatch } from "./pollution.js";
export { JsonNumber, MAX_DEPTH, NotJson, encode, jsonEqual, schemaErrors, strictParse } from "./json.js";
