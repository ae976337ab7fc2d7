package dev.toolcert.adapter;

import java.util.Map;

/**
 * One bug: the invariant it breaks, its grade, how many cases showed it, its smallest case, what was
 * expected and observed, the reproducer file ({@code --out}) and the command line that replays it.
 */
public record Finding(
        String invariant,
        String grade,
        int count,
        String caseName,
        String message,
        String replay,
        String reproducer,
        String id,
        Map<String, Object> raw) {

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder(invariant);
        if (grade != null) {
            s.append(" (").append(grade).append(')');
        }
        if (id != null) {
            s.append(" [").append(id).append(']');
        }
        s.append(": ").append(count).append(count == 1 ? " failing case" : " failing cases");
        if (caseName != null) {
            s.append("\n  smallest case: ").append(caseName);
        }
        if (message != null && !message.isEmpty()) {
            for (String line : message.split("\n", -1)) {
                s.append("\n  ").append(line);
            }
        }
        if (reproducer != null) {
            s.append("\n  reproducer: ").append(reproducer);
        }
        if (replay != null) {
            s.append("\n  replay: ").append(replay);
        }
        return s.toString();
    }
}
