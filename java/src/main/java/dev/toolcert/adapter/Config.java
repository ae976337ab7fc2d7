package dev.toolcert.adapter;

import java.util.Map;

/**
 * The setting of the last {@code configure}: the level, the dialect (meaningless at the events
 * level), the server profile's wire behaviours ({@code quirks}, name to flag) and whether to
 * validate arguments against the tools' schemas (only with the {@code schema} capability).
 */
public record Config(String level, String dialect, Map<String, Object> quirks, boolean schema) {
    /** Whether the profile sends the wire behaviour {@code name}. */
    public boolean quirk(String name) {
        return Boolean.TRUE.equals(quirks.get(name));
    }
}
