package dev.toolcert.adapter;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.stream.Stream;

/**
 * Runs the {@code toolcert} binary against an adapter and reads its findings: what the JUnit
 * integration ({@code dev.toolcert.adapter.junit}) reports as failing tests.
 *
 * <p>The binary is {@code $TOOLCERT_BIN} when set, otherwise {@code toolcert} on PATH. {@link
 * #certify} runs {@code toolcert certify --format json --out DIR} and returns a {@link Report} whose
 * findings are the report's {@code findings[]}, each with its reproducer (the scenario file
 * {@code --out} wrote) and the command line that replays it.
 */
public final class Toolcert {
    private Toolcert() {}

    /** The options of one certification; every field is optional. */
    public static final class Options {
        String level;
        String dialect;
        Integer cases;
        Long seed;
        String grade;
        boolean schema = true;
        String caseName;
        List<String> args = new ArrayList<>();
        Path outDir;
        Path cwd;
        long timeoutSeconds;

        public Options level(String v) { level = v; return this; }
        public Options dialect(String v) { dialect = v; return this; }
        public Options cases(int v) { cases = v; return this; }
        public Options seed(long v) { seed = v; return this; }
        public Options grade(String v) { grade = v; return this; }
        /** {@code false}: certify with the schema profile off ({@code --no-schema}). */
        public Options schema(boolean v) { schema = v; return this; }
        /** Only the named case ({@code --case}). */
        public Options caseName(String v) { caseName = v; return this; }
        /** More CLI arguments. */
        public Options args(String... v) { args.addAll(List.of(v)); return this; }
        public Options outDir(Path v) { outDir = v; return this; }
        public Options cwd(Path v) { cwd = v; return this; }
        /** Kill toolcert after this long (0: no limit). */
        public Options timeoutSeconds(long v) { timeoutSeconds = v; return this; }
    }

    public static Options options() {
        return new Options();
    }

    /** {@code $TOOLCERT_BIN}, otherwise {@code toolcert} on PATH; throws naming both. */
    public static String findBinary() {
        String env = System.getenv("TOOLCERT_BIN");
        if (env != null && !env.isEmpty()) {
            File f = new File(env);
            if (!f.isFile() || !f.canExecute()) {
                throw new ToolcertException("TOOLCERT_BIN=" + env + " is not an executable file");
            }
            return env;
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                File f = new File(dir, "toolcert");
                if (f.isFile() && f.canExecute()) {
                    return f.getPath();
                }
            }
        }
        throw new ToolcertException("the toolcert binary is not on PATH and TOOLCERT_BIN is not set "
                + "(install it with `cargo install --path .` in a toolcert checkout, or point TOOLCERT_BIN at it)");
    }

    /** {@code exec:CMD} for a bare command; {@code builtin:...} and {@code exec:...} unchanged. */
    public static String subjectName(String subject) {
        return subject.startsWith("exec:") || subject.startsWith("builtin:") ? subject : "exec:" + subject;
    }

    /** {@code s} quoted for {@code sh} when it needs it (as Python's shlex.quote). */
    public static String shellQuote(String s) {
        if (!s.isEmpty() && s.chars().allMatch(c -> Character.isLetterOrDigit(c) && c < 128 || "@%+=:,./-_".indexOf(c) >= 0)) {
            return s;
        }
        return "'" + s.replace("'", "'\"'\"'") + "'";
    }

    public static String shellJoin(List<String> words) {
        return String.join(" ", words.stream().map(Toolcert::shellQuote).toList());
    }

    /**
     * The command that runs {@code mainClass} in a new JVM with this JVM's class path: the subject of
     * an adapter that lives in the project under test. Under Maven Surefire's manifest-only jar the
     * class path is read from that jar's manifest, so the command still works (and replays) after the
     * test run.
     */
    public static String javaCommand(String mainClass, String... args) {
        List<String> words = new ArrayList<>();
        words.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        words.add("-cp");
        words.add(String.join(File.pathSeparator, classPath()));
        words.add(mainClass);
        for (String a : args) {
            if (!a.isEmpty()) {
                words.add(a);
            }
        }
        return shellJoin(words);
    }

    /** This JVM's class path, entry by entry (a manifest-only jar's Class-Path expanded). */
    public static List<String> classPath() {
        List<String> out = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            List<String> inner = manifestClassPath(entry);
            if (inner != null) {
                out.addAll(inner);
            } else {
                out.add(Paths.get(entry).toAbsolutePath().toString());
            }
        }
        return out;
    }

    // Surefire starts the test JVM on a temporary jar whose manifest lists the real class path.
    private static List<String> manifestClassPath(String entry) {
        if (!entry.endsWith(".jar") || !Paths.get(entry).getFileName().toString().startsWith("surefirebooter")) {
            return null;
        }
        try (JarFile jar = new JarFile(entry)) {
            Manifest m = jar.getManifest();
            String cp = m == null ? null : m.getMainAttributes().getValue("Class-Path");
            if (cp == null) {
                return null;
            }
            List<String> out = new ArrayList<>();
            for (String url : cp.trim().split("\\s+")) {
                out.add(Paths.get(URI.create(url)).toString());
            }
            return out;
        } catch (IOException | IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * Certifies {@code subject} (a command, or {@code exec:CMD} / {@code builtin:NAME}) with the toolcert
     * binary and returns its report. Throws {@link ToolcertException} when toolcert cannot run or
     * refuses the options (exit 2 or 5), naming what it said.
     */
    public static Report certify(String subject, Options o) {
        subject = subjectName(subject);
        String binary = findBinary();
        Path out;
        try {
            out = o.outDir != null ? o.outDir : Files.createTempDirectory("toolcert-");
        } catch (IOException e) {
            throw new ToolcertException("cannot make a folder for the reproducers: " + e);
        }
        List<String> command = new ArrayList<>(List.of(binary, "certify", "--subject", subject, "--format", "json",
                "--out", out.toString()));
        if (o.level != null) {
            command.addAll(List.of("--level", o.level));
        }
        if (o.dialect != null) {
            command.addAll(List.of("--dialect", o.dialect));
        }
        if (o.cases != null) {
            command.addAll(List.of("--cases", o.cases.toString()));
        }
        if (o.seed != null) {
            command.addAll(List.of("--seed", o.seed.toString()));
        }
        if (o.grade != null) {
            command.addAll(List.of("--grade", o.grade));
        }
        if (!o.schema) {
            command.add("--no-schema");
        }
        if (o.caseName != null) {
            command.addAll(List.of("--case", o.caseName));
        }
        command.addAll(o.args);
        String stdout;
        String stderr;
        int code;
        try {
            ProcessBuilder pb = new ProcessBuilder(command);
            if (o.cwd != null) {
                pb.directory(o.cwd.toFile());
            }
            Process p = pb.start();
            p.getOutputStream().close();
            // Both pipes are drained at once, so a chatty run cannot block on a full pipe.
            CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> readAll(p.getErrorStream()));
            CompletableFuture<String> res = CompletableFuture.supplyAsync(() -> readAll(p.getInputStream()));
            if (o.timeoutSeconds > 0) {
                if (!p.waitFor(o.timeoutSeconds, TimeUnit.SECONDS)) {
                    p.descendants().forEach(ProcessHandle::destroyForcibly);
                    p.destroyForcibly();
                    throw new ToolcertException(shellJoin(command) + " did not finish in " + o.timeoutSeconds + " s");
                }
            }
            code = p.waitFor();
            stdout = res.join();
            stderr = err.join();
        } catch (IOException e) {
            throw new ToolcertException("running " + shellJoin(command) + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ToolcertException("interrupted while running " + shellJoin(command));
        }
        if (code != 0 && code != 1 && code != 3 && code != 4) {
            String said = stderr.strip().isEmpty() ? stdout.strip() : stderr.strip();
            throw new ToolcertException(shellJoin(command) + " exited " + code + ": " + said);
        }
        Map<String, Object> json;
        try {
            json = Server.asMap(Json.parse(stdout, 100_000));
        } catch (NotJson | IllegalArgumentException e) {
            String said = stderr.strip();
            throw new ToolcertException(shellJoin(command) + " exited " + code + " without a JSON report: "
                    + (said.isEmpty() ? e.getMessage() : said));
        }
        return new Report(subject, command, code, json, findings(json, subject, out), out.toString());
    }

    private static String readAll(InputStream in) {
        try (in) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    // As the reproducers' names are made (toolcert_runner::report::file_stem).
    static String fileStem(String caseName) {
        StringBuilder s = new StringBuilder();
        for (char c : caseName.toCharArray()) {
            s.append(c < 128 && Character.isLetterOrDigit(c) || c == '-' || c == '.' ? c : '_');
        }
        return s.toString();
    }

    private static String reproducerOf(Path outDir, String caseName) {
        if (caseName == null) {
            return null;
        }
        String name = fileStem(caseName) + ".json";
        Path direct = outDir.resolve("failures").resolve(name);
        if (Files.exists(direct)) {
            return direct.toString();
        }
        // A run over several settings writes each setting's reproducers in a folder of its own.
        try (Stream<Path> dirs = Files.list(outDir)) {
            return dirs.map(d -> d.resolve("failures").resolve(name)).filter(Files::exists).sorted()
                    .map(Path::toString).findFirst().orElse(null);
        } catch (IOException e) {
            return null;
        }
    }

    private static String violationText(Map<String, Object> v) {
        String where = v.get("call_id") instanceof String id && !id.isEmpty() ? "call " + id : "the turn";
        return where + ": expected " + v.get("expected") + "; observed " + v.get("observed");
    }

    private static String str(Object o) {
        return o instanceof String s ? s : null;
    }

    private static List<Map<String, Object>> maps(Object o) {
        List<Map<String, Object>> out = new ArrayList<>();
        if (o instanceof List<?> list) {
            for (Object x : list) {
                if (x instanceof Map<?, ?>) {
                    out.add(Server.asMap(x));
                }
            }
        }
        return out;
    }

    /** The replay line for a reproducer, as toolcert prints it (when the report has none). */
    private static String replay(Map<String, Object> report, String subject, String reproducer) {
        if (reproducer == null) {
            return null;
        }
        List<String> words = new ArrayList<>(List.of("toolcert", "certify", "--subject", subject));
        String level = report.get("level") instanceof String l ? l : "events";
        if (!"events".equals(level)) {
            words.addAll(List.of("--level", level));
            if (report.get("dialect") instanceof String d) {
                words.addAll(List.of("--dialect", d));
            }
        }
        if (Boolean.FALSE.equals(report.get("schema"))) {
            words.add("--no-schema");
        }
        words.addAll(List.of("--scenario", reproducer));
        return shellJoin(words);
    }

    static List<Finding> findings(Map<String, Object> report, String subject, Path outDir) {
        List<Finding> found = new ArrayList<>();
        if (report.get("findings") instanceof List<?>) {
            // One entry per distinct bug: {id, invariant, grade, kind, title, cases, first_case,
            // reproducer: a failure kept in full {case, violations, transcript, scenario}, replay}.
            for (Map<String, Object> f : maps(report.get("findings"))) {
                Map<String, Object> kept = f.get("reproducer") instanceof Map<?, ?> ? Server.asMap(f.get("reproducer")) : null;
                String caseName = kept != null && str(kept.get("case")) != null ? str(kept.get("case")) : str(f.get("first_case"));
                List<String> lines = new ArrayList<>();
                lines.add(str(f.get("title")) != null ? str(f.get("title")) : String.valueOf(f.getOrDefault("kind", "")));
                if (kept != null) {
                    List<Map<String, Object>> all = maps(kept.get("violations"));
                    List<Map<String, Object>> mine = all.stream().filter(v -> f.get("invariant") != null
                            && f.get("invariant").equals(v.get("invariant"))).toList();
                    for (Map<String, Object> v : mine.isEmpty() ? all : mine) {
                        lines.add(violationText(v));
                    }
                    if (str(kept.get("transcript")) != null) {
                        lines.add("transcript:");
                        for (String t : str(kept.get("transcript")).split("\n")) {
                            lines.add("  " + t);
                        }
                    }
                }
                String first = str(f.get("first_case"));
                if (first != null && !first.equals(caseName)) {
                    lines.add("first seen in " + first);
                }
                String reproducer = reproducerOf(outDir, caseName);
                int count = f.get("cases") instanceof Number n ? n.intValue() : 1;
                String replay = str(f.get("replay")) != null ? str(f.get("replay")) : replay(report, subject, reproducer);
                found.add(new Finding(String.valueOf(f.getOrDefault("invariant", "?")), str(f.get("grade")), count,
                        caseName, String.join("\n", lines), replay, reproducer, str(f.get("id")), f));
            }
            return found;
        }
        // Without findings[]: one finding per failing invariant, its first kept failure as the reproducer.
        List<Map<String, Object>> failures = maps(report.get("failures"));
        for (Map<String, Object> inv : maps(report.get("invariants"))) {
            if (!"fail".equals(inv.get("status"))) {
                continue;
            }
            String iid = String.valueOf(inv.get("id"));
            Map<String, Object> firstFailure = null;
            List<Map<String, Object>> mine = List.of();
            for (Map<String, Object> fl : failures) {
                mine = maps(fl.get("violations")).stream().filter(v -> iid.equals(v.get("invariant"))).toList();
                if (!mine.isEmpty()) {
                    firstFailure = fl;
                    break;
                }
            }
            List<String> lines = new ArrayList<>();
            lines.add(String.valueOf(inv.getOrDefault("rule", "")));
            String caseName = null;
            String grade = "fail".equals(inv.get("must")) ? "must" : "should";
            if (firstFailure != null) {
                caseName = str(firstFailure.get("case"));
                grade = str(mine.get(0).get("grade")) != null ? str(mine.get(0).get("grade")) : grade;
                mine.forEach(v -> lines.add(violationText(v)));
            } else {
                lines.add("(no failure of this rule kept in full: run with --show or a larger --out)");
            }
            String reproducer = reproducerOf(outDir, caseName);
            int count = inv.get("failures") instanceof Number n ? n.intValue() : 0;
            found.add(new Finding(iid, grade, count, caseName, String.join("\n", lines),
                    replay(report, subject, reproducer), reproducer, null, inv));
        }
        return found;
    }
}
