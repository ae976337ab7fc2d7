package dev.toolcert.sdks;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

/**
 * The local HTTP server an SDK is pointed at (its base URL): every request is answered with the
 * current {@link Feed}'s exact bytes, one HTTP chunk per transport chunk of the harness, flushed one
 * by one, then ended the way the stream ended:
 *
 * <ul>
 *   <li>{@code eof}: the chunked body's terminator, then the connection closes (the server closed the stream);
 *   <li>{@code disconnect}: the connection closes without the terminator (a dropped connection mid-body);
 *   <li>{@code cancel}: the connection stays open, so the client waits for more, until the adapter
 *       cancels the request as a caller does ({@link Feed#release}).
 * </ul>
 *
 * <p>It listens on the loopback address only. TCP may merge chunks the harness cut apart before the
 * SDK reads them; the bytes, their order and every cut inside an event the SDK must buffer across
 * reads are kept. A request that finds no feed (an agent layer's follow-up: the tool results sent
 * back) gets the dialect's small complete text turn ({@link #followUp}) and its body is kept.
 */
public final class FeedServer implements AutoCloseable {
    private final ServerSocket socket;
    private final Thread acceptor;
    private volatile Feed feed;
    private volatile String followUpDialect = "anthropic";
    private final List<String> sentBack = new ArrayList<>();

    public FeedServer() throws IOException {
        socket = new ServerSocket();
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        acceptor = new Thread(this::acceptLoop, "toolcert-feed-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** {@code http://127.0.0.1:PORT}: the base URL to give the SDK (with the provider's path appended). */
    public String baseUrl() {
        return "http://127.0.0.1:" + socket.getLocalPort();
    }

    /** The feed the next request is answered with (null: follow-ups only). */
    public void serve(Feed next, String dialect) {
        synchronized (sentBack) {
            sentBack.clear();
        }
        followUpDialect = dialect;
        feed = next;
    }

    /** The bodies of the requests answered with a follow-up turn since the last {@link #serve}. */
    public List<String> sentBack() {
        synchronized (sentBack) {
            return List.copyOf(sentBack);
        }
    }

    private void acceptLoop() {
        while (!socket.isClosed()) {
            Socket s;
            try {
                s = socket.accept();
            } catch (IOException e) {
                return;
            }
            Thread t = new Thread(() -> answer(s), "toolcert-feed-connection");
            t.setDaemon(true);
            t.start();
        }
    }

    private void answer(Socket s) {
        Feed f = null;
        try {
            s.setTcpNoDelay(true);
            InputStream in = s.getInputStream();
            String body = readRequest(in);
            OutputStream out = s.getOutputStream();
            synchronized (this) {
                f = feed;
                feed = null;
            }
            if (f == null) {
                synchronized (sentBack) {
                    sentBack.add(body);
                    if (sentBack.size() > 8) {
                        throw new IOException("the SDK kept making requests after the stream's turn");
                    }
                }
                f = new Feed(List.of(followUp(followUpDialect)), "eof");
            }
            f.connection(s);
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                    + "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            for (byte[] chunk : f.chunks) {
                if (chunk.length == 0) {
                    continue; // an empty HTTP chunk would be the terminator
                }
                out.write((Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(chunk);
                out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                f.written++;
            }
            f.allWritten.complete(null);
            switch (f.end) {
                case "disconnect" -> {
                    // The harness's disconnect comes after the client has read every chunk. The JDK's
                    // HttpClient (LangChain4j's) hands a connection error to its reader ahead of the body
                    // it has buffered, so closing at once loses the last chunks by a race: the close
                    // waits a moment, so the chunks are read first, as they would be on a real network.
                    sleep(DISCONNECT_DELAY_MS);
                    s.close();
                    f.ended();
                }
                case "cancel" -> f.released.join(); // held open until the caller cancels
                default -> {
                    out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    s.shutdownOutput();
                    // The client closes the connection (`Connection: close`) once it has read the
                    // terminator: from then on it has the whole body.
                    s.setSoTimeout((int) Harness.SETTLE_MS);
                    while (in.read() >= 0) {
                        // nothing more is expected from the client
                    }
                    f.ended();
                }
            }
        } catch (IOException | RuntimeException e) {
            if (f != null) {
                f.allWritten.complete(null);
            }
        } finally {
            try {
                s.close();
            } catch (IOException e) {
                // already closed
            }
        }
    }

    /** How long a {@code disconnect} waits after the last chunk before the connection drops. */
    static final long DISCONNECT_DELAY_MS = 50;

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Reads the request head and body (by Content-Length or chunked) and returns the body. */
    private static String readRequest(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int last4 = 0;
        while (last4 != 0x0d0a0d0a) { // CR LF CR LF ends the head
            int b = in.read();
            if (b < 0) {
                throw new IOException("the request ended in its head");
            }
            head.write(b);
            last4 = (last4 << 8) | b;
        }
        long length = 0;
        boolean chunked = false;
        for (String line : head.toString(StandardCharsets.ISO_8859_1).split("\r\n")) {
            String lower = line.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:")) {
                length = Long.parseLong(lower.substring(15).trim());
            } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                chunked = true;
            }
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (chunked) {
            while (true) {
                String size = readLine(in);
                int semi = size.indexOf(';');
                long n = Long.parseLong((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
                if (n == 0) {
                    while (!readLine(in).isEmpty()) {
                        // trailers
                    }
                    break;
                }
                body.write(in.readNBytes((int) n));
                readLine(in);
            }
        } else if (length > 0) {
            body.write(in.readNBytes((int) length));
        }
        return body.toString(StandardCharsets.UTF_8);
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder s = new StringBuilder();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            if (b != '\r') {
                s.append((char) b);
            }
        }
        return s.toString();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }

    /** One stream's chunks and end, served to one request. */
    public static final class Feed {
        final List<byte[]> chunks;
        final String end;
        volatile int written;
        final CompletableFuture<Void> allWritten = new CompletableFuture<>();
        final CompletableFuture<Void> released = new CompletableFuture<>();
        private volatile long endedAt;
        private volatile Socket connection;

        public Feed(List<byte[]> chunks, String end) {
            this.chunks = chunks;
            this.end = end;
        }

        void connection(Socket s) {
            connection = s;
        }

        /** Whether a request took this feed. */
        public boolean taken() {
            return connection != null;
        }

        /** Completes when every chunk was written (or the connection failed). */
        public CompletableFuture<Void> allWritten() {
            return allWritten;
        }

        /** Ends the response: the held connection of a {@code cancel} closes; the server's thread ends. */
        /** The client has the whole body (or its end): the client closed after the terminator, or the connection dropped. */
        void ended() {
            if (endedAt == 0) {
                endedAt = System.nanoTime();
            }
        }

        /** When the body ended for the client ({@link System#nanoTime}), 0 while it has not. */
        public long endedAt() {
            return endedAt;
        }

        public void release() {
            ended();
            released.complete(null);
            Socket s = connection;
            if (s != null && "cancel".equals(end)) {
                try {
                    s.close();
                } catch (IOException e) {
                    // already closed
                }
            }
        }

        public String end() {
            return end;
        }
    }

    /** One small complete turn per dialect (the text "ok", no call): warm-ups and follow-ups. */
    public static byte[] followUp(String dialect) {
        String s = switch (dialect) {
            case "openai-chat" -> "data: {\"id\":\"chatcmpl-warm\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"gpt-4.1\","
                    + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":null}]}\n\n"
                    + "data: {\"id\":\"chatcmpl-warm\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"gpt-4.1\","
                    + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                    + "data: [DONE]\n\n";
            case "openai-responses" -> "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_warm\","
                    + "\"object\":\"response\",\"created_at\":0,\"status\":\"in_progress\",\"model\":\"gpt-4.1\",\"output\":[],"
                    + "\"parallel_tool_calls\":true,\"tool_choice\":\"auto\",\"tools\":[]}}\n\n"
                    + "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"sequence_number\":1,"
                    + "\"output_index\":0,\"item\":{\"type\":\"message\",\"id\":\"msg_warm\",\"role\":\"assistant\",\"status\":\"in_progress\","
                    + "\"content\":[]}}\n\n"
                    + "event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"sequence_number\":2,"
                    + "\"item_id\":\"msg_warm\",\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\","
                    + "\"annotations\":[]}}\n\n"
                    + "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":3,"
                    + "\"item_id\":\"msg_warm\",\"output_index\":0,\"content_index\":0,\"delta\":\"ok\"}\n\n"
                    + "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":4,\"response\":"
                    + "{\"id\":\"resp_warm\",\"object\":\"response\",\"created_at\":0,\"status\":\"completed\",\"model\":\"gpt-4.1\","
                    + "\"output\":[{\"type\":\"message\",\"id\":\"msg_warm\",\"role\":\"assistant\",\"status\":\"completed\",\"content\":"
                    + "[{\"type\":\"output_text\",\"text\":\"ok\",\"annotations\":[]}]}],\"parallel_tool_calls\":true,"
                    + "\"tool_choice\":\"auto\",\"tools\":[]}}\n\n";
            default -> "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_warm\",\"type\":\"message\","
                    + "\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,"
                    + "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
                    + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
                    + "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
                    + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                    + "\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n"
                    + "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
                    + "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
                    + "\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}\n\n"
                    + "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        };
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
