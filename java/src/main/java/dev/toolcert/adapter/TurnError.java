package dev.toolcert.adapter;

/** Fails the whole turn (the stream ends here). {@code cls} is one of {@link Protocol#ERROR_CLASSES}. */
public class TurnError extends Exception {
    private static final long serialVersionUID = 1L;

    private final String cls;
    private final String detail;

    public TurnError(String cls, String detail) {
        super(cls + ": " + detail);
        if (!Protocol.ERROR_CLASSES.contains(cls)) {
            throw new IllegalArgumentException(cls + " is not a turn error class (one of " + Protocol.ERROR_CLASSES + ")");
        }
        this.cls = cls;
        this.detail = detail;
    }

    /** The stream could not be read (bad SSE, bad UTF-8, a dialect event missing a field). */
    public static TurnError malformed(String detail) {
        return new TurnError("malformed", detail);
    }

    public String cls() {
        return cls;
    }

    public String detail() {
        return detail;
    }
}
