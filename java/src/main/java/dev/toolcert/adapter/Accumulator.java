package dev.toolcert.adapter;

/**
 * One stream's accumulator, made fresh per stream by a {@link Factory}. At the events level a unit
 * is a neutral event ({@code Map}: {@code {"type": "args_delta", "index": 1, "fragment": "..."}});
 * at the wire level an SSE event {@code {"event", "data", "id"}} of {@link Config#dialect()}; at
 * the bytes level the transport chunk's {@code byte[]}.
 *
 * <p>Report through {@code out}; throw {@link TurnError} to fail the turn, {@link Skip} to skip the
 * case. Any other exception is recorded as the stream's crash (SUBJECT-CRASH), with its stack trace.
 */
public interface Accumulator<U> {
    void feed(U unit, Emit out) throws Exception;

    /** The stream has ended: {@code end} is {@code eof}, {@code disconnect} or {@code cancel}. */
    void finish(String end, Emit out) throws Exception;
}
