/** toolcert could not be run, or refused the run (a usage or internal error). */
export declare class ToolcertError extends Error {}
/** One bug: the invariant it breaks, how often, its smallest reproducer, its replay. */
export interface Finding {
    invariant: string;
    grade: string | null;
    count: number;
    case: string | null;
    message: string;
    replay: string | null;
    reproducer: string | null;
    id: string | null;
    raw: Record<string, unknown>;
}
export interface CertifyOptions {
    level?: "events" | "wire" | "bytes";
    dialect?: "anthropic" | "openai-chat" | "openai-responses";
    cases?: number;
    seed?: number;
    grade?: "must" | "should";
    /** false: --no-schema. */
    schema?: boolean;
    case?: string;
    /** More toolcert certify arguments. */
    args?: string[];
    outDir?: string;
    cwd?: string;
    timeout?: number;
}
export interface Report {
    subject: string;
    command: string[];
    exitCode: number;
    json: Record<string, any>;
    findings: Finding[];
    outDir: string;
    conforms: boolean;
    invariants: { id: string; status: "pass" | "fail" | "n/a"; rule: string }[];
    summary(): string;
    assertConforms(): void;
}
export declare function findBinary(): string;
export declare function subjectName(subject: string): string;
export declare function shellQuote(s: string): string;
export declare function formatFinding(f: Finding): string;
export declare function certify(subject: string, options?: CertifyOptions): Report;
