package dev.toolcert.adapter;

import java.util.List;
import java.util.Map;

/**
 * Makes a fresh {@link Accumulator} for one stream: {@code tools} are the request's tools
 * ({@code {"name", "schema"?}}), {@code config} the configured setting.
 */
@FunctionalInterface
public interface Factory<U> {
    Accumulator<U> create(List<Map<String, Object>> tools, Config config) throws Exception;
}
