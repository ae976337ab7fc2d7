package dev.toolcert.sdks;

import java.util.List;

/**
 * One SDK, driven as its documentation shows, at the bytes level: subclasses say which dialects it
 * speaks, make its client on the local server's base URL ({@link #setup}), and run one stream
 * ({@link #run}: make the request, consume it, read the final result the SDK hands its caller, set the
 * stop signal the SDK hands over). An exception the SDK raises is the turn's error ({@link #classify}
 * names its class); one raised by the adapter's own code is the stream's crash.
 */
public abstract class SdkAdapter {
    /** Shown in reports. */
    public abstract String name();

    public abstract List<String> dialects();

    /** The SDK's artifacts and versions, as the handshake reports them. */
    public abstract String version();

    public abstract String homepage();

    /** Where the SDK's documentation tells a caller what to check before running tools. */
    public abstract String policyDoc();

    /** Called once, before the first stream: make the clients on {@code baseUrl}. */
    public void setup(String baseUrl) throws Exception {}

    /** Runs one stream through the SDK. Blocks until the SDK returned or threw. */
    public abstract Outcome run(Turn turn) throws Throwable;

    /** The turn error class of an exception the SDK raised. */
    public String classify(Throwable e) {
        return Harness.classifyCommon(e);
    }
}
