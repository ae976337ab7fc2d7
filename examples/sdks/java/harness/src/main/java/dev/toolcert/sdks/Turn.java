package dev.toolcert.sdks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One stream as an adapter runs it: the tools to offer, the dialect, the base URL of the local server
 * that answers with the stream's bytes, and where the adapter reports the text the SDK showed while
 * streaming and registers how a caller cancels the request.
 */
public final class Turn {
    /** A tool of the request: its name and JSON Schema (plain Java values: Long, BigDecimal, maps, lists). */
    public record Tool(String name, Map<String, Object> schema) {}

    public final List<Tool> tools;
    public final String dialect;
    public final String baseUrl;
    private final StringBuilder shown = new StringBuilder();
    private final List<Runnable> cancels = new ArrayList<>();

    Turn(List<Tool> tools, String dialect, String baseUrl) {
        this.tools = tools;
        this.dialect = dialect;
        this.baseUrl = baseUrl;
    }

    /** Prose the SDK handed its caller while streaming. */
    public synchronized void shown(String piece) {
        if (piece != null) {
            shown.append(piece);
        }
    }

    public synchronized String shownText() {
        return shown.toString();
    }

    /** How a caller cancels this request (closing the SDK's stream, disposing a subscription). */
    public synchronized void onCancel(Runnable cancel) {
        cancels.add(cancel);
    }

    synchronized List<Runnable> cancels() {
        return List.copyOf(cancels);
    }
}
