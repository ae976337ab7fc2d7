package dev.toolcert.adapter;

/** toolcert could not be run, or refused the run (a usage or internal error). */
public class ToolcertException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ToolcertException(String message) {
        super(message);
    }
}
