package dev.toolcert.adapter;

/** The text is not exactly one JSON document (RFC 8259, as strictly as serde_json reads it). */
public class NotJson extends Exception {
    private static final long serialVersionUID = 1L;

    public NotJson(String message) {
        super(message);
    }
}
