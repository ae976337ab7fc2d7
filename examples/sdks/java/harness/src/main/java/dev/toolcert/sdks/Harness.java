package dev.toolcert.sdks;

import dev.toolcert.adapter.Accumulator;
import dev.toolcert.adapter.Emit;
import dev.toolcert.adapter.JsonNumber;
import dev.toolcert.adapter.Outcomes;
import dev.toolcert.adapter.Protocol;
import dev.toolcert.adapter.Server;
import dev.toolcert.adapter.TurnError;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The Java SDK adapters' side of the protocol: toolcert-adapter's loop ({@link Server}) at the bytes
 * level, with one SDK behind it.
 *
 * <p>How a stream is run. The harness delivers a stream's transport chunks one by one, then its end.
 * A real SDK pulls its bytes from an HTTP response and hands its result only once the stream is over,
 * so the adapter collects the chunks and, at the stream's end, runs the SDK over them in one go: the
 * SDK's client has the local {@link FeedServer} as its base URL, which answers the request with exactly
 * those chunks and ends the body the way the stream ended. Streams of a case run one after another,
 * each as its own request. One process serves every case ({@code --jobs 1}): JVM start is slow.
 *
 * <p>The caller policy (docs/CERTIFICATION.md, "Caller policies"): {@code --policy as-handed-over} (the
 * default, or TOOLCERT_POLICY) dispatches every call the SDK's final result offers unless the SDK
 * raised or marked that very call; {@code --policy documented} also makes the check the SDK's
 * documentation tells a caller to make before running tools (the stop signal): when it says the turn
 * was cut every call is {@code failed(truncated)}, when it is missing or says the response never
 * finished, {@code failed(abandoned)}.
 *
 * <p>Stamps. Outcomes and a turn error are emitted at the finish step, after every chunk was delivered
 * ({@code units} = the stream's chunk count, {@code at_finish} true): that is when the SDK ran.
 */
public final class Harness {
    /** How long an SDK may take to return or throw once its stream has ended (it has every byte by then): longer is a hang, the stream's crash. */
    static final long SETTLE_MS = 4_000;
    /**
     * How long once the client has the whole body (it closed the connection after the terminator, or
     * the connection dropped): an SDK hands its result within milliseconds then, so a longer wait is
     * a hang, found sooner than SETTLE_MS (shrinking replays a hanging case many times).
     */
    static final long AFTER_END_MS = 1_500;
    /** With the {@code cancel} ending: how long the SDK may go on after the last chunk before the caller cancels. */
    static final long CANCEL_GRACE_MS = 100;

    private Harness() {}

    /** Serves toolcert with the SDK {@code --sdk NAME} of {@code registry}; returns the exit status. */
    public static int main(String[] args, Map<String, Supplier<SdkAdapter>> registry) throws Exception {
        String sdk = null;
        String policy = System.getenv().getOrDefault("TOOLCERT_POLICY", "as-handed-over");
        if (policy.isEmpty()) {
            policy = "as-handed-over";
        }
        for (int i = 0; i < args.length; i++) {
            if ("--sdk".equals(args[i]) && i + 1 < args.length) {
                sdk = args[++i];
            } else if ("--policy".equals(args[i])) {
                policy = i + 1 < args.length ? args[++i] : "";
            }
        }
        if (!List.of("as-handed-over", "documented").contains(policy)) {
            System.err.println("unknown caller policy " + policy + " (one of as-handed-over, documented)");
            return 2;
        }
        if (sdk == null || !registry.containsKey(sdk)) {
            System.err.println("usage: --sdk NAME [--policy as-handed-over|documented]; NAME one of " + registry.keySet());
            return 2;
        }
        // stdout is the protocol channel only: an SDK's prints and logs go to stderr.
        OutputStream proto = new FileOutputStream(FileDescriptor.out);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        SdkAdapter adapter = registry.get(sdk).get();
        FeedServer server = new FeedServer();
        // Make the client and send one small complete stream of each dialect through it while the
        // handshake goes on: the SDK's class loading is paid before the first case.
        CompletableFuture<Void> ready = CompletableFuture.runAsync(() -> prepare(adapter, server));
        ready.exceptionally(e -> null);
        String finalPolicy = policy;
        return Server.named(adapter.name())
                .version(adapter.version())
                .homepage(adapter.homepage())
                .dialects(adapter.dialects())
                .quirks(Protocol.QUIRKS) // an SDK reads whatever bytes come: every server profile
                .extra("policy", policy)
                .extra("policy_doc", adapter.policyDoc())
                .bytes((tools, config) -> new Stream(adapter, server, ready, finalPolicy, tools(tools), config.dialect()))
                .serve(waitingForSetup(System.in, ready), proto);
    }

    private static void prepare(SdkAdapter adapter, FeedServer server) {
        try {
            adapter.setup(server.baseUrl());
            for (String dialect : adapter.dialects()) {
                FeedServer.Feed feed = new FeedServer.Feed(List.of(FeedServer.followUp(dialect)), "eof");
                server.serve(feed, dialect);
                try {
                    adapter.run(new Turn(List.of(), dialect, server.baseUrl()));
                } catch (Throwable e) {
                    System.err.println("toolcert: the warm-up stream of " + dialect + " failed: " + e);
                } finally {
                    feed.release();
                    server.serve(null, dialect);
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("the SDK could not be set up: " + e, e);
        }
    }

    // `configure` is answered once the SDK is set up (or after 7 s): the request timeouts then cover
    // the JVM's start and the SDK's class loading in parts, as in the Python harness.
    private static InputStream waitingForSetup(InputStream in, CompletableFuture<Void> ready) throws IOException {
        PipedInputStream piped = new PipedInputStream(1 << 20);
        PipedOutputStream sink = new PipedOutputStream(piped);
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8)); sink) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.contains("\"configure\"")) {
                        try {
                            ready.get(7, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        } catch (ExecutionException | TimeoutException e) {
                            // the first stream says it
                        }
                    }
                    sink.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                    sink.flush();
                }
            } catch (IOException e) {
                // stdin closed: the loop ends with the pipe
            }
        }, "toolcert-stdin");
        t.setDaemon(true);
        t.start();
        return piped;
    }

    private static List<Turn.Tool> tools(List<Map<String, Object>> tools) {
        List<Turn.Tool> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Map<String, Object> t : tools) {
            String name = String.valueOf(t.get("name"));
            if (!seen.add(name)) {
                continue; // a request names each tool once
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> schema = t.get("schema") instanceof Map<?, ?> m ? (Map<String, Object>) plain(m) : null;
            out.add(new Turn.Tool(name, schema));
        }
        return out;
    }

    /** A request's value (the tools' schemas) with the package's exact numbers as Long or BigDecimal, for SDKs' mappers. */
    public static Object plain(Object v) {
        if (v instanceof JsonNumber n) {
            if (n.isIntegerKind()) {
                BigInteger i = n.decimal().toBigIntegerExact();
                return i.bitLength() < 64 ? (Object) i.longValue() : i;
            }
            return n.decimal();
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(k), plain(x)));
            return out;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>();
            l.forEach(x -> out.add(plain(x)));
            return out;
        }
        return v;
    }

    // As deep as a reply may carry arguments (docs/PROTOCOL.md).
    private static final int WIRE_DEPTH = 512;

    /**
     * What an SDK handed over, as a JSON value the harness reads back exactly. What JSON cannot carry is
     * replaced by a marker string, so the harness still sees a dispatch and judges it against the model's
     * text: a non-finite number, a lone surrogate (U+FFFD), nesting deeper than a reply may carry, any
     * other object (its class and text).
     */
    public static Object wireValue(Object v) {
        return wireValue(v, 0);
    }

    private static Object wireValue(Object v, int depth) {
        if (v == null || v instanceof Boolean || v instanceof JsonNumber || v instanceof BigDecimal || v instanceof BigInteger
                || v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return v;
        }
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            return Double.isNaN(d) || Double.isInfinite(d) ? "<non-finite number " + v + ">" : v;
        }
        if (v instanceof String s) {
            return dev.toolcert.adapter.Json.hasLoneSurrogate(s) ? fixSurrogates(s) : s;
        }
        if (depth >= WIRE_DEPTH) {
            return "<nested too deeply>";
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(wireValue(String.valueOf(k), depth + 1)), wireValue(x, depth + 1)));
            return out;
        }
        if (v instanceof Iterable<?> l) {
            List<Object> out = new ArrayList<>();
            l.forEach(x -> out.add(wireValue(x, depth + 1)));
            return out;
        }
        String text = "<" + v.getClass().getName() + ": " + v + ">";
        return text.length() > 200 ? text.substring(0, 200) : text;
    }

    private static String fixSurrogates(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                out.append(c).append(s.charAt(++i));
            } else {
                out.append(Character.isSurrogate(c) ? '\uFFFD' : c);
            }
        }
        return out.toString();
    }

    /** The exception and its causes, outermost first. */
    public static List<Throwable> chain(Throwable e) {
        List<Throwable> out = new ArrayList<>();
        Set<Throwable> seen = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Throwable x = e; x != null && seen.add(x); x = x.getCause()) {
            out.add(x);
        }
        return out;
    }

    /** Whether a class of this name (or a superclass of it) is in the chain. */
    public static boolean inChain(Throwable e, String className) {
        for (Throwable x : chain(e)) {
            for (Class<?> c = x.getClass(); c != null; c = c.getSuperclass()) {
                if (c.getName().equals(className)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The transport ended the body early: the dropped connection or the cancel the adapter made. The
     * local server's connection fails in no other way, so any I/O error in the chain is one of them.
     */
    public static boolean endedEarly(Throwable e) {
        for (Throwable x : chain(e)) {
            if (x instanceof IOException || x instanceof java.io.UncheckedIOException || x instanceof InterruptedException
                    || x instanceof java.util.concurrent.CancellationException) {
                return true;
            }
            String cls = x.getClass().getSimpleName();
            if (cls.endsWith("IoException") || cls.endsWith("IOException")) {
                return true; // the SDKs' own wrappers (OpenAIIoException, AnthropicIoException)
            }
        }
        return false;
    }

    /** incomplete for an early end of the body, malformed for undecodable event data, other otherwise. */
    public static String classifyCommon(Throwable e) {
        if (inChain(e, "com.fasterxml.jackson.core.JsonProcessingException") || inChain(e, "tools.jackson.core.JacksonException")
                || inChain(e, "java.nio.charset.CharacterCodingException")) {
            return "malformed";
        }
        if (endedEarly(e)) {
            return "incomplete";
        }
        return "other";
    }

    private static Throwable unwrap(Throwable e) {
        while ((e instanceof ExecutionException || e instanceof java.util.concurrent.CompletionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /** The exception was raised by the adapter's own code or the package's (its innermost frame is in dev.toolcert), not by the SDK. */
    static boolean raisedByAdapter(Throwable e) {
        StackTraceElement[] st = e.getStackTrace();
        return st.length > 0 && st[0].getClassName().startsWith("dev.toolcert.");
    }

    @SuppressWarnings("unchecked")
    static <E extends Throwable> E sneaky(Throwable e) throws E {
        throw (E) e;
    }

    /**
     * The pinned version of {@code group:artifact}, from the {@code versions.properties} the build
     * filled in (the shaded jar keeps no Maven metadata of the Gradle-built SDKs).
     */
    public static String pinned(String group, String artifact) {
        String key = group + ":" + artifact;
        try (InputStream in = Harness.class.getResourceAsStream("/dev/toolcert/sdks/versions.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return key + ":" + p.getProperty(key, "(version unknown)");
        } catch (IOException e) {
            return key + ":(version unknown)";
        }
    }

    private static final ExecutorService RUNNER = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "toolcert-sdk-run");
        t.setDaemon(true);
        return t;
    });

    /** One stream, as the package's bytes-level accumulator: feed keeps the chunks, finish runs the SDK over them. */
    static final class Stream implements Accumulator<byte[]> {
        private final SdkAdapter adapter;
        private final FeedServer server;
        private final CompletableFuture<Void> ready;
        private final String policy;
        private final List<Turn.Tool> tools;
        private final String dialect;
        private final List<byte[]> chunks = new ArrayList<>();

        Stream(SdkAdapter adapter, FeedServer server, CompletableFuture<Void> ready, String policy, List<Turn.Tool> tools,
                String dialect) {
            this.adapter = adapter;
            this.server = server;
            this.ready = ready;
            this.policy = policy;
            this.tools = tools;
            this.dialect = dialect;
        }

        // The SDK's result, within SETTLE_MS of the stream's end and AFTER_END_MS of the body's end.
        private static Outcome await(Future<Outcome> run, FeedServer.Feed feed)
                throws InterruptedException, ExecutionException, TimeoutException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SETTLE_MS);
            while (true) {
                try {
                    return run.get(20, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    long ended = feed.endedAt();
                    if (ended != 0) {
                        deadline = Math.min(deadline, ended + TimeUnit.MILLISECONDS.toNanos(AFTER_END_MS));
                    }
                    if (System.nanoTime() - deadline >= 0) {
                        throw e;
                    }
                }
            }
        }

        @Override
        public void feed(byte[] chunk, Emit out) {
            chunks.add(chunk);
        }

        @Override
        public void finish(String end, Emit out) throws Exception {
            try {
                ready.get(60, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw new IllegalStateException("the SDK could not be set up", e.getCause());
            }
            FeedServer.Feed feed = new FeedServer.Feed(chunks, end);
            Turn turn = new Turn(tools, dialect, server.baseUrl());
            server.serve(feed, dialect);
            boolean cancelled = false;
            Outcome got;
            Future<Outcome> run = RUNNER.submit(() -> {
                try {
                    return adapter.run(turn);
                } catch (Throwable e) {
                    throw Harness.<RuntimeException>sneaky(e); // the future keeps it as it is
                }
            });
            try {
                if ("cancel".equals(end)) {
                    feed.allWritten().get(SETTLE_MS, TimeUnit.MILLISECONDS);
                    try {
                        got = run.get(CANCEL_GRACE_MS, TimeUnit.MILLISECONDS);
                    } catch (TimeoutException e) {
                        // The caller cancels the request it is still waiting on.
                        cancelled = true;
                        // On threads of their own: an SDK's close may wait for the read it interrupts
                        // (openai-java's stream close waits on the reader's lock), which ends only when
                        // the connection does.
                        for (Runnable c : turn.cancels()) {
                            Thread t = new Thread(c, "toolcert-cancel");
                            t.setDaemon(true);
                            t.start();
                        }
                        feed.release();
                        got = await(run, feed);
                    }
                } else {
                    got = await(run, feed);
                }
            } catch (TimeoutException e) {
                run.cancel(true);
                throw new IllegalStateException("the SDK neither returned nor threw within " + SETTLE_MS
                        + " ms of the stream's end (" + end + "), nor " + AFTER_END_MS + " ms after it had the whole body");
            } catch (ExecutionException e) {
                Throwable cause = unwrap(e);
                if (raisedByAdapter(cause) && !(cancelled && endedEarly(cause))) {
                    throw new IllegalStateException("the adapter failed", cause); // the stream's crash
                }
                out.text(String.valueOf(wireValue(turn.shownText())));
                String cls = cancelled ? "incomplete" : adapter.classify(cause);
                String detail = cause.getClass().getName() + ": " + cause.getMessage();
                throw new TurnError(cls, detail.length() > 2000 ? detail.substring(0, 2000) : detail);
            } finally {
                feed.release();
                server.serve(null, dialect);
            }
            String withheld = null;
            if ("documented".equals(policy) && !Outcome.COMPLETE.equals(got.stop)) {
                withheld = Outcome.CUT.equals(got.stop) ? "truncated" : "abandoned";
            }
            for (Outcome.Call call : got.calls) {
                String id = call.callId() == null ? "" : call.callId();
                String name = call.name() == null ? "" : call.name();
                if (call.dispatch() && withheld == null) {
                    out.outcome(Outcomes.dispatchable(id, name, wireValue(call.value())));
                } else {
                    String raw = call.raw() != null ? call.raw()
                            : call.value() instanceof String s ? s : dev.toolcert.adapter.Json.write(wireValue(call.value()));
                    // A call the caller's check withholds is not run whatever its text: the check comes first.
                    String reason = withheld != null ? withheld : call.reason() != null ? call.reason() : "unparseable";
                    out.outcome(Outcomes.failed(reason, id, name, (String) wireValue(raw)));
                }
            }
            if (got.layout != null) {
                out.layout(got.layout);
            }
            out.text(String.valueOf(wireValue(got.text == null ? "" : got.text)));
        }
    }
}
