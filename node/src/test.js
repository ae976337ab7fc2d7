// node:test integration: certify an adapter with the `toolcert` binary and report each
// finding as a failing test, with its reproducer and replay line.
//
//     // toyacc.test.mjs: one test per invariant of the run; a broken one fails with its findings
//     import { certifyTests } from "toolcert-adapter/test";
//     certifyTests("node adapter.mjs", { cases: 300 });
//
// `certifyTests` certifies once, synchronously, when the test file is loaded, then registers
// one test per invariant: pass, fail with the findings, or skipped for a rule no case of the
// run could break (`n/a`). The binary is $TOOLCERT_BIN or `toolcert` on PATH.

import { describe, test } from "node:test";

import { ToolcertError, certify, formatFinding } from "./certify.js";

export { ToolcertError, certify, findBinary, formatFinding, subjectName } from "./certify.js";

/** Registers a suite named after the subject, with one test per invariant. */
export function certifyTests(subject, options = {}) {
    let report;
    try {
        report = certify(subject, options);
    } catch (e) {
        if (!(e instanceof ToolcertError)) throw e;
        test(`toolcert certify ${subject}`, () => {
            throw e;
        });
        return null;
    }
    const status = new Map(report.invariants.map((r) => [r.id, r.status]));
    const ids = report.invariants.map((r) => r.id);
    for (const f of report.findings) if (!ids.includes(f.invariant)) ids.push(f.invariant);
    describe(`toolcert certify ${report.subject}`, () => {
        for (const id of ids) {
            const skip = status.get(id) === "n/a" ? `${id}: n/a, no case of this run could break it` : false;
            test(id, { skip }, () => {
                const mine = report.findings.filter((f) => f.invariant === id);
                if (mine.length > 0) {
                    const error = new Error(mine.map(formatFinding).join("\n\n"));
                    error.stack = error.message; // the finding is the message: no JS stack
                    throw error;
                }
                if (status.get(id) === "fail") throw new Error(`${id} fails (${report.subject}); see ${report.outDir}`);
            });
        }
        if (ids.length === 0) {
            test("conformance", () => report.assertConforms());
        }
    });
    return report;
}
