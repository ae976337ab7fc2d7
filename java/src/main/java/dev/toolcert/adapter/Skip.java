package dev.toolcert.adapter;

/**
 * Thrown from a factory, {@code feed} or {@code finish}: this adapter cannot run the case (the reply
 * is {@code skipped}, recorded against the subject without a restart).
 */
public class Skip extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Skip(String reason) {
        super(reason);
    }

    public String reason() {
        return getMessage();
    }
}
