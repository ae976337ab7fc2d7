// Runs the `toolcert` binary against an adapter and reads its findings: what the node:test
// helper (toolcert-adapter/test) reports as failing tests.
//
// The binary is $TOOLCERT_BIN when set, otherwise `toolcert` on PATH. `certify` runs
// `toolcert certify --format json --out DIR` and returns a report whose `findings` are the
// report's `findings[]` when it has them, otherwise one finding per failing invariant built
// from its `invariants[]` and `failures[]`; each carries its reproducer (the scenario file
// --out wrote) and the command line that replays it.

import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** toolcert could not be run, or refused the run (a usage or internal error). */
export class ToolcertError extends Error {}

function executable(path) {
    try {
        accessSync(path, constants.X_OK);
        return true;
    } catch {
        return false;
    }
}

/** $TOOLCERT_BIN, otherwise `toolcert` on PATH; throws ToolcertError naming both. */
export function findBinary() {
    const env = process.env.TOOLCERT_BIN;
    if (env) {
        if (!executable(env)) throw new ToolcertError(`TOOLCERT_BIN=${env} is not an executable file`);
        return env;
    }
    for (const dir of (process.env.PATH ?? "").split(delimiter)) {
        if (dir && executable(join(dir, "toolcert"))) return join(dir, "toolcert");
    }
    throw new ToolcertError(
        "the toolcert binary is not on PATH and TOOLCERT_BIN is not set " +
            "(install it with `cargo install --path .` in a toolcert checkout, or point TOOLCERT_BIN at it)",
    );
}

/** `exec:CMD` for a bare command; `builtin:...` and `exec:...` unchanged. */
export function subjectName(subject) {
    return subject.startsWith("exec:") || subject.startsWith("builtin:") ? subject : `exec:${subject}`;
}

// As the reproducers' names are made (toolcert_runner::report::file_stem).
const fileStem = (c) => c.replace(/[^A-Za-z0-9.-]/g, "_");

/** POSIX shell quoting, as the replay lines print arguments. */
export function shellQuote(s) {
    return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function violationText(v) {
    const where = v.call_id ? `call ${v.call_id}` : "the turn";
    return `${where}: expected ${v.expected}; observed ${v.observed}`;
}

function settingArgs(r, subject) {
    // As toolcert_runner::Report::setting_args prints them.
    const args = ["--subject", subject];
    const level = r.level ?? "events";
    if (level !== "events") {
        args.push("--level", level);
        if (r.dialect) args.push("--dialect", r.dialect);
        if (r.chat_index_zero) args.push("--chat-index-zero");
        if (r.chat_repeat_fields) args.push("--chat-repeat-fields");
    }
    if (r.schema === false) args.push("--no-schema");
    if (r.grade === "must") args.push("--grade", "must");
    return args;
}

function replay(r, subject, kase, generated, reproducer) {
    const base = ["toolcert", "certify", ...settingArgs(r, subject)];
    let args;
    if (reproducer) args = [...base, "--scenario", reproducer];
    else if (!kase) return null;
    else if (generated) args = [...base, "--seed", String(generated[0]), "--cases", String(generated[1] + 1), "--case", kase];
    else args = [...base, "--case", kase];
    return args.map(shellQuote).join(" ");
}

/** A finding as text: the invariant, count, smallest case, violations, reproducer, replay. */
export function formatFinding(f) {
    let head = f.invariant;
    if (f.grade) head += ` (${f.grade})`;
    if (f.id) head += ` [${f.id}]`;
    const lines = [`${head}: ${f.count} failing case${f.count === 1 ? "" : "s"}`];
    if (f.case) lines.push(`  smallest case: ${f.case}`);
    for (const l of (f.message ?? "").split("\n")) if (l) lines.push(`  ${l}`);
    if (f.reproducer) lines.push(`  reproducer: ${f.reproducer}`);
    if (f.replay) lines.push(`  replay: ${f.replay}`);
    return lines.join("\n");
}

function findings(r, subject, outDir) {
    const failures = r.failures ?? [];
    const reproducerOf = (kase) => {
        if (!kase) return null;
        const name = `${fileStem(kase)}.json`;
        const path = join(outDir, "failures", name);
        if (existsSync(path)) return path;
        // A run over several settings writes each setting's reproducers in a directory of its own.
        const nested = readdirSync(outDir, { withFileTypes: true })
            .filter((d) => d.isDirectory())
            .map((d) => join(outDir, d.name, "failures", name))
            .filter((p) => existsSync(p))
            .sort();
        return nested[0] ?? null;
    };
    if (Array.isArray(r.findings)) {
        // One entry per distinct bug: {id, invariant, grade, kind, title, cases, first_case,
        // reproducer: a failure kept in full {case, violations, transcript, scenario}, replay}.
        return r.findings.map((f) => {
            const kept = f.reproducer && typeof f.reproducer === "object" ? f.reproducer : null;
            const kase = kept?.case ?? f.first_case ?? f.case ?? null;
            const lines = [f.title ?? f.kind ?? ""];
            if (kept) {
                const all = kept.violations ?? [];
                const mine = all.filter((v) => v.invariant === f.invariant);
                lines.push(...(mine.length > 0 ? mine : all).map(violationText));
                if (kept.transcript) lines.push("transcript:", ...kept.transcript.split("\n").filter(Boolean).map((t) => `  ${t}`));
            }
            if (f.first_case && f.first_case !== kase) lines.push(`first seen in ${f.first_case}`);
            const reproducer = reproducerOf(kase);
            return {
                invariant: f.invariant ?? "?",
                grade: f.grade ?? null,
                count: Number(f.cases ?? f.count ?? 1),
                case: kase,
                message: lines.filter(Boolean).join("\n"),
                replay: f.replay ?? replay(r, subject, kase, kept?.generated, reproducer),
                reproducer,
                id: f.id ?? null,
                raw: f,
            };
        });
    }
    // Without findings[]: one finding per failing invariant, its first kept failure as the
    // reproducer.
    const out = [];
    for (const inv of r.invariants ?? []) {
        if (inv.status !== "fail") continue;
        const first = failures.find((fl) => (fl.violations ?? []).some((v) => v.invariant === inv.id));
        const lines = [inv.rule ?? ""];
        let grade = null;
        if (first) {
            const mine = first.violations.filter((v) => v.invariant === inv.id);
            grade = mine[0].grade;
            lines.push(...mine.map(violationText));
            if (first.transcript) lines.push("transcript:", ...first.transcript.split("\n").filter(Boolean).map((t) => `  ${t}`));
        } else {
            lines.push("(no failure of this rule kept in full)");
        }
        const kase = first ? first.case : null;
        const reproducer = reproducerOf(kase);
        out.push({
            invariant: inv.id,
            grade: grade ?? (inv.must === "fail" ? "must" : "should"),
            count: Number(inv.failures ?? 0),
            case: kase,
            message: lines.join("\n"),
            replay: replay(r, subject, kase, first?.generated, reproducer),
            reproducer,
            id: null,
            raw: inv,
        });
    }
    return out;
}

/**
 * Certifies `subject` (a command, or `exec:CMD` / `builtin:NAME`) with the toolcert binary,
 * synchronously, and returns its report. Throws ToolcertError when toolcert cannot run or
 * refuses the options (exit 2 or 5), naming what it said.
 */
export function certify(subject, options = {}) {
    subject = subjectName(subject);
    const binary = findBinary();
    const outDir = options.outDir ?? mkdtempSync(join(tmpdir(), "toolcert-"));
    const command = [binary, "certify", "--subject", subject, "--format", "json", "--out", outDir];
    if (options.level) command.push("--level", options.level);
    if (options.dialect) command.push("--dialect", options.dialect);
    if (options.cases !== undefined) command.push("--cases", String(options.cases));
    if (options.seed !== undefined) command.push("--seed", String(options.seed));
    if (options.grade) command.push("--grade", options.grade);
    if (options.schema === false) command.push("--no-schema");
    if (options.case) command.push("--case", options.case);
    command.push(...(options.args ?? []));
    const printed = command.map(shellQuote).join(" ");
    const done = spawnSync(command[0], command.slice(1), {
        cwd: options.cwd,
        timeout: options.timeout,
        encoding: "utf8",
        maxBuffer: 1 << 30,
    });
    if (done.error) throw new ToolcertError(`running ${printed}: ${done.error.message}`);
    if (![0, 1, 3, 4].includes(done.status)) {
        throw new ToolcertError(`${printed} exited ${done.status ?? done.signal}: ${(done.stderr || done.stdout).trim()}`);
    }
    let json;
    try {
        json = JSON.parse(done.stdout);
    } catch (e) {
        throw new ToolcertError(`${printed} did not print a JSON report: ${e.message}`);
    }
    const found = findings(json, subject, outDir);
    const conforms = Boolean(json.conforms) && found.length === 0;
    return {
        subject,
        command,
        exitCode: done.status,
        json,
        findings: found,
        outDir,
        conforms,
        invariants: json.invariants ?? [],
        summary() {
            const head = `${subject}: ${conforms ? "conforms" : "DOES NOT CONFORM"} (${json.cases ?? "?"} cases, exit ${done.status})`;
            return [head, ...found.map(formatFinding)].join("\n");
        },
        assertConforms() {
            if (!conforms) throw new Error(this.summary());
        },
    };
}
