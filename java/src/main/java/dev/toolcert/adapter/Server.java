package dev.toolcert.adapter;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The subprocess protocol loop (docs/PROTOCOL.md, version 1), the adapter's side.
 *
 * <p>toolcert starts the adapter, sends one JSON request per line on stdin ({@code start},
 * {@code configure}, {@code run}, {@code stop}) and reads one reply per line on stdout. {@link #serve}
 * answers them: it declares the implementation, keeps the configured setting, feeds each stream of
 * a case to a fresh accumulator from the factory of the configured level, in the order the case
 * gives, stamps every outcome and error with the units delivered so far, and writes the results.
 * The accumulator is yours; this loop is the same for every adapter.
 *
 * <pre>{@code
 * System.exit(Server.named("toyacc").events(MyAdapter::new).serve());
 * }</pre>
 */
public final class Server {
    private final String name;
    private Factory<Map<String, Object>> events;
    private Factory<Map<String, Object>> wire;
    private Factory<byte[]> bytes;
    private String version;
    private String homepage;
    private List<String> dialects = Protocol.DIALECTS;
    private List<String> quirks = List.of();
    private boolean schema;
    private Map<String, Number> caps = Map.of();
    private final Map<String, Object> extra = new LinkedHashMap<>();

    private Server(String name) {
        this.name = name;
    }

    /** A server for the implementation {@code name} (shown in reports). */
    public static Server named(String name) {
        return new Server(name);
    }

    /** The events level: units are neutral event maps. */
    public Server events(Factory<Map<String, Object>> factory) {
        this.events = factory;
        return this;
    }

    /** The wire level: units are SSE event maps {@code {"event", "data", "id"}} (Bedrock: frames). */
    public Server wire(Factory<Map<String, Object>> factory) {
        this.wire = factory;
        return this;
    }

    /** The bytes level: units are the transport chunks' bytes (decoded from the protocol's text or base64). */
    public Server bytes(Factory<byte[]> factory) {
        this.bytes = factory;
        return this;
    }

    public Server version(String version) {
        this.version = version;
        return this;
    }

    public Server homepage(String homepage) {
        this.homepage = homepage;
        return this;
    }

    /** The dialects the wire and bytes levels speak (default: anthropic, openai-chat, openai-responses). */
    public Server dialects(List<String> dialects) {
        for (String d : dialects) {
            if (!Protocol.DIALECTS.contains(d) && !Protocol.BYTES_ONLY_DIALECTS.contains(d)) {
                throw new IllegalArgumentException("unknown dialect " + d);
            }
        }
        this.dialects = List.copyOf(dialects);
        return this;
    }

    /** The server profiles' wire behaviours the decoders read ({@link Protocol#QUIRKS} for an SDK). */
    public Server quirks(List<String> quirks) {
        for (String q : quirks) {
            if (!Protocol.QUIRKS.contains(q)) {
                throw new IllegalArgumentException("unknown quirk " + q + " (one of " + Protocol.QUIRKS + ")");
            }
        }
        this.quirks = List.copyOf(quirks);
        return this;
    }

    /** Declares the {@code schema} capability: only if the accumulator validates arguments against tool schemas. */
    public Server schema(boolean schema) {
        this.schema = schema;
        return this;
    }

    /**
     * The limits the SDK documents, by name from {@link Protocol#CAPS}, each a non-negative integer
     * (e.g. {@code Map.of("calls", 128, "depth", 128)}): a stream past one may fail with a {@code limit}
     * turn error. Left out of the handshake when empty.
     */
    public Server caps(Map<String, ? extends Number> caps) {
        for (Map.Entry<String, ? extends Number> c : caps.entrySet()) {
            if (!Protocol.CAPS.contains(c.getKey())) {
                throw new IllegalArgumentException("unknown cap " + c.getKey() + " (one of " + Protocol.CAPS + ")");
            }
            Number n = c.getValue();
            // Integral types only: a Double's text would not be a JSON integer.
            boolean integral = n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte
                    || n instanceof BigInteger;
            if (!integral || Json.toDecimal(n).signum() < 0) {
                throw new IllegalArgumentException("cap " + c.getKey() + " must be a non-negative integer, not " + n);
            }
        }
        // In the protocol's order, whatever the map's.
        Map<String, Number> declared = new LinkedHashMap<>();
        for (String c : Protocol.CAPS) {
            if (caps.containsKey(c)) {
                declared.put(c, caps.get(c));
            }
        }
        this.caps = declared;
        return this;
    }

    /** A free field of the handshake's {@code implementation} (e.g. {@code policy}, {@code policy_doc}). */
    public Server extra(String key, Object value) {
        extra.put(key, value);
        return this;
    }

    /**
     * Serves on the process's stdin and stdout until {@code stop} or the end of stdin; returns the
     * exit status. {@code System.out} is pointed at stderr first, so that nothing but replies (a
     * library's prints) reaches the protocol channel.
     */
    public int serve() throws IOException {
        OutputStream proto = new FileOutputStream(FileDescriptor.out);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        return serve(System.in, proto);
    }

    /** Serves on the given streams. */
    public int serve(InputStream in, OutputStream out) throws IOException {
        Map<String, Object> factories = new LinkedHashMap<>();
        if (events != null) {
            factories.put("events", events);
        }
        if (wire != null) {
            factories.put("wire", wire);
        }
        if (bytes != null) {
            factories.put("bytes", bytes);
        }
        if (factories.isEmpty()) {
            throw new IllegalStateException("a server needs a factory for at least one level (events, wire or bytes)");
        }
        Map<String, Object> implementation = new LinkedHashMap<>();
        implementation.put("name", name);
        implementation.put("language", "java");
        implementation.put("language_version", System.getProperty("java.version"));
        implementation.put("levels", new ArrayList<>(factories.keySet()));
        implementation.put("dialects", dialects);
        implementation.put("quirks", quirks);
        implementation.put("capabilities", schema ? List.of("schema") : List.of());
        if (version != null) {
            implementation.put("version", version);
        }
        if (homepage != null) {
            implementation.put("homepage", homepage);
        }
        if (!caps.isEmpty()) {
            implementation.put("caps", caps);
        }
        extra.forEach(implementation::putIfAbsent);

        BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        Config config = new Config("events", "anthropic", Map.of(), schema);
        // profile.memory: each run reply carries peak_bytes (toolcert bench --bounded asks).
        boolean memory = false;
        String line;
        while ((line = reader.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            Map<String, Object> request;
            try {
                // Numbers are kept as written: tool schemas' bounds are compared with exact arguments.
                request = asMap(Json.parse(line, 100_000));
            } catch (NotJson e) {
                System.err.println("toolcert-adapter: a request is not JSON: " + e.getMessage());
                send(out, Map.of("errored", true, "context", Map.of("message", "the request is not JSON: " + e.getMessage())));
                continue;
            }
            Object cmd = request.get("cmd");
            if ("start".equals(cmd)) {
                Object v = request.get("version");
                if (!(v instanceof JsonNumber n) || n.intValue() != Protocol.VERSION) {
                    System.err.println("toolcert speaks protocol " + v + ", this adapter " + Protocol.VERSION);
                }
                send(out, Map.of("version", Protocol.VERSION, "implementation", implementation));
            } else if ("configure".equals(cmd)) {
                Object level = request.get("level");
                Object dialect = request.get("dialect");
                if (!(level instanceof String l) || !factories.containsKey(l)) {
                    send(out, Map.of("ok", false, "reason", "level " + level + " is not supported"));
                    continue;
                }
                if (!"events".equals(l) && !dialects.contains(dialect)) {
                    send(out, Map.of("ok", false, "reason", "dialect " + dialect + " is not supported"));
                    continue;
                }
                Map<String, Object> profile = request.get("profile") instanceof Map<?, ?> ? asMap(request.get("profile")) : Map.of();
                Map<String, Object> q = request.get("quirks") instanceof Map<?, ?> ? asMap(request.get("quirks")) : Map.of();
                boolean validate = schema && !Boolean.FALSE.equals(profile.getOrDefault("schema", Boolean.TRUE));
                config = new Config(l, dialect instanceof String d ? d : "anthropic", q, validate);
                memory = Boolean.TRUE.equals(profile.get("memory"));
                send(out, Map.of("ok", true));
            } else if ("run".equals(cmd)) {
                Object seq = request.get("seq");
                Map<String, Object> reply = new LinkedHashMap<>();
                reply.put("seq", seq);
                try {
                    Map<String, Object> kase = asMap(request.get("case"));
                    // Before the clock starts: its collection is not the subject's time.
                    HeapPeak peak = memory ? new HeapPeak() : null;
                    // The accumulation alone, in CPU time (toolcert bench prices it): see CpuWatch.
                    CpuWatch watch = new CpuWatch();
                    List<Map<String, Object>> results = runCase(kase, config, factories, peak);
                    long elapsed = watch.elapsed();
                    reply.put("results", results);
                    reply.put("elapsed_ns", elapsed);
                    if (peak != null) {
                        reply.put("peak_bytes", peak.bytes());
                    }
                } catch (Skip e) {
                    reply.put("skipped", true);
                    reply.put("reason", e.reason());
                } catch (Exception | StackOverflowError e) {
                    reply.put("errored", true);
                    reply.put("context", Map.of("message", String.valueOf(e), "traceback", trace(e)));
                }
                send(out, reply);
            } else if ("stop".equals(cmd)) {
                return 0;
            } else {
                System.err.println("unknown command " + cmd);
                Map<String, Object> reply = new LinkedHashMap<>();
                reply.put("seq", request.get("seq"));
                reply.put("errored", true);
                reply.put("context", Map.of("message", "unknown command " + cmd));
                send(out, reply);
            }
        }
        return 0;
    }

    /**
     * A run's CPU time ({@code elapsed_ns}), in nanoseconds: what the JVM's threads spent between
     * the watch's making and {@link #elapsed()}. Not the process's CPU time: the JVM reads that
     * from times(2), in 10 ms ticks on Linux, coarser than most runs. The thread that runs the
     * case (it feeds the accumulator) is read with its own CPU clock, last before the run and
     * first after it, so reading the others is not counted; every other live thread (an SDK run
     * on a pool, its HTTP client's) is read before and after too, one started during the run
     * counted from zero. Not counted: the JVM's own threads (garbage collection, the JIT
     * compilers, which the JVM does not list) and a thread that ended during the run. Where
     * threads' CPU time cannot be read, the process's CPU time, then the wall clock. At least 1 ns,
     * as the Node package sends: a run too short for the clock still ran.
     */
    static final class CpuWatch {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        private static final boolean BY_THREAD = byThread();
        private static final com.sun.management.OperatingSystemMXBean OS =
                ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os ? os : null;

        private final long[] ids;
        private final long[] before;
        private final long self;

        CpuWatch() {
            if (BY_THREAD) {
                ids = THREADS.getAllThreadIds();
                Arrays.sort(ids);
                before = new long[ids.length];
                for (int i = 0; i < ids.length; i++) {
                    before[i] = THREADS.getThreadCpuTime(ids[i]);
                }
                self = THREADS.getCurrentThreadCpuTime();
            } else {
                ids = null;
                before = null;
                self = processTime();
            }
        }

        private static boolean byThread() {
            if (!THREADS.isThreadCpuTimeSupported() || !THREADS.isCurrentThreadCpuTimeSupported()) {
                return false;
            }
            try {
                if (!THREADS.isThreadCpuTimeEnabled()) {
                    THREADS.setThreadCpuTimeEnabled(true);
                }
                return THREADS.getCurrentThreadCpuTime() >= 0;
            } catch (UnsupportedOperationException | SecurityException e) {
                return false;
            }
        }

        private static long processTime() {
            long t = OS != null ? OS.getProcessCpuTime() : -1;
            return t >= 0 ? t : System.nanoTime();
        }

        /** The CPU time since the watch was made, at least 1 ns. */
        long elapsed() {
            if (!BY_THREAD) {
                return Math.max(1, processTime() - self);
            }
            long total = THREADS.getCurrentThreadCpuTime() - self;
            long me = Thread.currentThread().getId();
            for (long id : THREADS.getAllThreadIds()) {
                if (id == me) {
                    continue;
                }
                long now = THREADS.getThreadCpuTime(id);
                int at = Arrays.binarySearch(ids, id);
                long was = at >= 0 ? before[at] : 0;
                if (now > 0 && was >= 0 && now > was) {
                    total += now - was;
                }
            }
            return Math.max(1, total);
        }
    }

    /**
     * A run's peak heap ({@code peak_bytes}). The JVM keeps no per-run peak to read, so the heap's
     * used bytes are sampled every 1,024 steps and after each finish (a finish parses whole
     * buffers: what it holds is seen before it is let go), as the Node package does. Used bytes
     * count garbage not yet collected, so this overstates what the run needed (by up to the young
     * generation); the floor, the package's reference, is measured the same way.
     */
    static final class HeapPeak {
        private static final Runtime RUNTIME = Runtime.getRuntime();
        private final long held;
        private long peak;
        private int steps;

        /**
         * Records what is held before the run, after a collection: otherwise earlier garbage (the
         * last run's, the request's parse) would be counted as held, and a collection during the
         * run, freeing it, would hide the run's peak under it. (A no-op under
         * -XX:+DisableExplicitGC, where the baseline keeps that garbage.)
         */
        HeapPeak() {
            System.gc();
            held = used();
            peak = held;
        }

        // Runtime's figure, not MemoryMXBean's: under G1 the latter counts eden in whole regions
        // (MiBs), coarser than the bounded rule's 1 MiB of slack; this one is as fine as a TLAB.
        private static long used() {
            return RUNTIME.totalMemory() - RUNTIME.freeMemory();
        }

        /** Samples the heap. */
        void now() {
            peak = Math.max(peak, used());
        }

        /** Counts a step of the case's order, sampling every 1,024th. */
        void step() {
            if ((++steps & 1023) == 0) {
                now();
            }
        }

        /** The most held at once over what was held before the run. */
        long bytes() {
            return Math.max(0, peak - held);
        }
    }

    private static void send(OutputStream out, Map<String, Object> message) throws IOException {
        StringBuilder s = new StringBuilder();
        Json.write(message, s);
        s.append('\n');
        out.write(s.toString().getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) {
        if (!(o instanceof Map<?, ?>)) {
            throw new IllegalArgumentException("expected a JSON object, got " + o);
        }
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> asList(Object o) {
        if (!(o instanceof List<?>)) {
            throw new IllegalArgumentException("expected a JSON array, got " + o);
        }
        return (List<Object>) o;
    }

    /** A stack trace as text, for a crash or an errored reply. */
    public static String trace(Throwable e) {
        StringWriter w = new StringWriter();
        e.printStackTrace(new PrintWriter(w));
        String s = w.toString();
        return s.length() > 8000 ? s.substring(0, 8000) : s;
    }

    static byte[] bytesOf(Map<String, Object> chunk) {
        // A chunk is {"text"} when its bytes are UTF-8, otherwise {"bytes": base64}.
        Object text = chunk.get("text");
        if (text instanceof String s) {
            return s.getBytes(StandardCharsets.UTF_8);
        }
        return Base64.getDecoder().decode((String) chunk.get("bytes"));
    }

    /**
     * Feeds every stream of {@code case} to its own fresh accumulator, step by step in the case's
     * order: {@code [s, k]} delivers unit k of stream s; {@code [s, len(units)]} ends stream s. A turn
     * error ends a stream (nothing more is fed, finish is not called). Throws {@link Skip}.
     */
    public static List<Map<String, Object>> runCase(Map<String, Object> kase, Config config, Map<String, Object> factories) {
        return runCase(kase, config, factories, null);
    }

    /** {@link #runCase(Map, Config, Map)}, sampling the heap into {@code peak} when it is not null. */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> runCase(Map<String, Object> kase, Config config, Map<String, Object> factories, HeapPeak peak) {
        String level = config.level();
        Factory<Object> make = (Factory<Object>) factories.get(level);
        boolean isBytes = "bytes".equals(level);
        List<Object> streams = asList(kase.get("streams"));
        int n = streams.size();
        List<Accumulator<Object>> accs = new ArrayList<>();
        List<Emit> emits = new ArrayList<>();
        List<Map<String, Object>> results = new ArrayList<>();
        for (Object so : streams) {
            Map<String, Object> stream = asMap(so);
            emits.add(new Emit());
            Map<String, Object> result = new LinkedHashMap<>();
            results.add(result);
            List<Map<String, Object>> tools = new ArrayList<>();
            if (stream.get("tools") instanceof List<?> ts) {
                for (Object t : ts) {
                    tools.add(asMap(t));
                }
            }
            try {
                accs.add(make.create(tools, config));
            } catch (Skip e) {
                throw e;
            } catch (Exception | StackOverflowError e) {
                result.put("crash", trace(e));
                accs.add(null);
            }
        }
        for (Object step : asList(kase.get("order"))) {
            if (peak != null) {
                peak.step();
            }
            List<Object> sk = asList(step);
            int s = ((Number) sk.get(0)).intValue();
            int k = ((Number) sk.get(1)).intValue();
            if (s < 0 || s >= n) {
                throw new IllegalArgumentException("step " + sk + " names no stream");
            }
            Accumulator<Object> acc = accs.get(s);
            if (acc == null) {
                continue;
            }
            Emit out = emits.get(s);
            Map<String, Object> stream = asMap(streams.get(s));
            List<Object> units = asList(stream.get("units"));
            try {
                if (k < units.size()) {
                    out.units++;
                    Map<String, Object> unit = asMap(units.get(k));
                    acc.feed(isBytes ? bytesOf(unit) : unit, out);
                } else {
                    out.atFinish = true;
                    accs.set(s, null);
                    Object end = stream.get("end");
                    acc.finish(end instanceof String e ? e : "eof", out);
                    if (peak != null) {
                        peak.now();
                    }
                }
            } catch (TurnError e) {
                accs.set(s, null);
                Map<String, Object> error = new LinkedHashMap<>();
                error.put("class", e.cls());
                error.put("detail", e.detail());
                error.put("units", out.units);
                error.put("at_finish", out.atFinish);
                results.get(s).put("error", error);
            } catch (Skip e) {
                throw e;
            } catch (Exception | StackOverflowError e) {
                accs.set(s, null);
                results.get(s).put("crash", trace(e));
            }
        }
        for (int i = 0; i < n; i++) {
            Map<String, Object> result = results.get(i);
            Emit out = emits.get(i);
            result.put("outcomes", out.outcomes);
            result.put("text", out.text.toString());
            if (out.layout != null) {
                result.put("layout", out.layout);
            }
            if (out.ending != null) {
                result.put("ending", out.ending);
            }
        }
        // The results included: a subject's output is its own (as the Python package counts it).
        if (peak != null) {
            peak.now();
        }
        return results;
    }
}
