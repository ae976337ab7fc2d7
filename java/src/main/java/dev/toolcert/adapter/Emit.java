package dev.toolcert.adapter;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where an accumulator reports. Everything is stamped with the number of the stream's units
 * delivered when it was emitted (counting the unit being handled) and whether it came from finish.
 */
public final class Emit {
    int units;
    boolean atFinish;
    final List<Map<String, Object>> outcomes = new ArrayList<>();
    final StringBuilder text = new StringBuilder();
    List<Map<String, Object>> layout;
    Map<String, Object> ending;

    /** One call's outcome: {@link Outcomes#dispatchable}, {@link Outcomes#schemaError} or {@link Outcomes#failed}. */
    public void outcome(Map<String, Object> outcome) {
        Map<String, Object> o = new LinkedHashMap<>(outcome);
        o.put("units", units);
        o.put("at_finish", atFinish);
        outcomes.add(o);
    }

    /** A piece of prose, as it arrives. */
    public void text(String piece) {
        text.append(piece);
    }

    /** Optional: the assembled message's slots in order, so block order can be checked. */
    public void layout(List<Map<String, Object>> slots) {
        layout = List.copyOf(slots);
    }

    /** A text slot of {@link #layout}. */
    public static Map<String, Object> textSlot(String text) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("slot", "text");
        s.put("text", text);
        return s;
    }

    /** A call slot of {@link #layout}. */
    public static Map<String, Object> callSlot(String callId) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("slot", "call");
        s.put("call_id", callId);
        return s;
    }

    /**
     * Optional: how the turn ended, as your library tells its caller ({@link Protocol#ENDINGS}), with
     * the stop reason as the provider spelled it, only when the stream carried one. Judged by
     * ACC-ENDING; not calling it leaves that rule n/a.
     */
    public void ending(String ending, String stopReason) {
        if (!Protocol.ENDINGS.contains(ending)) {
            throw new IllegalArgumentException(ending + " is not an ending (one of " + Protocol.ENDINGS + ")");
        }
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("ending", ending);
        e.put("stop_reason", stopReason);
        e.put("units", units);
        e.put("at_finish", atFinish);
        this.ending = e;
    }

    /** The units delivered so far (counting the one being handled). */
    public int units() {
        return units;
    }

    /** Whether this is the finish step. */
    public boolean atFinish() {
        return atFinish;
    }

    /** Re-stamps what comes next: an adapter that runs a library after the stream ended may know when it failed. */
    public void stamp(int units, boolean atFinish) {
        this.units = units;
        this.atFinish = atFinish;
    }
}
