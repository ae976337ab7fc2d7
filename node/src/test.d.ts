import type { CertifyOptions, Report } from "./certify.js";
export { ToolcertError, certify, findBinary, formatFinding, subjectName } from "./certify.js";
export type { CertifyOptions, Finding, Report } from "./certify.js";
/** Certifies once and registers one node:test test per invariant; null when toolcert could not run. */
export declare function certifyTests(subject: string, options?: CertifyOptions): Report | null;
