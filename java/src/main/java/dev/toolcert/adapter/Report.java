package dev.toolcert.adapter;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A certification: toolcert's JSON report, its exit code and the findings read from it. */
public record Report(String subject, List<String> command, int exitCode, Map<String, Object> json,
        List<Finding> findings, String outDir) {

    /** Whether the subject conforms: the report says so and no finding was read. */
    public boolean conforms() {
        return Boolean.TRUE.equals(json.get("conforms")) && findings.isEmpty();
    }

    /** The rules of the run, each with its {@code id}, {@code status} (pass, fail or n/a) and {@code rule}. */
    public List<Map<String, Object>> invariants() {
        List<Map<String, Object>> out = new ArrayList<>();
        if (json.get("invariants") instanceof List<?> list) {
            for (Object o : list) {
                out.add(Server.asMap(o));
            }
        }
        return out;
    }

    /** The status of one invariant ({@code pass}, {@code fail}, {@code n/a}), or null when the run has no such rule. */
    public String status(String invariant) {
        for (Map<String, Object> r : invariants()) {
            if (invariant.equals(r.get("id"))) {
                return r.get("status") instanceof String s ? s : null;
            }
        }
        return null;
    }

    public List<Finding> findingsFor(String invariant) {
        return findings.stream().filter(f -> f.invariant().equals(invariant)).toList();
    }

    public String summary() {
        StringBuilder s = new StringBuilder(subject).append(": ")
                .append(conforms() ? "conforms" : "DOES NOT CONFORM")
                .append(" (").append(json.getOrDefault("cases", "?")).append(" cases, exit ").append(exitCode).append(')');
        for (Finding f : findings) {
            s.append('\n').append(f);
        }
        return s.toString();
    }

    /** Throws {@link AssertionError} listing every finding with its reproducer and replay. */
    public void assertConforms() {
        if (!conforms()) {
            throw new AssertionError(summary());
        }
    }
}
