package dev.toolcert.adapter;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict JSON for adapters: the parse an accumulator makes at dispatch, and the writer of replies.
 *
 * <p>{@link #parse} reads exactly one JSON document (RFC 8259) as strictly as serde_json, the
 * oracle's parser, reads it: no {@code NaN}/{@code Infinity}, no lone surrogates, nothing after
 * the document, at most 512 levels of nesting, numbers that overflow a double refused. A key
 * written twice keeps its last value (docs/SPEC.md section 8, as serde_json and {@code JSON.parse}
 * do). Values come back as {@code Map<String, Object>} (insertion order), {@code List<Object>},
 * {@code String}, {@link JsonNumber} (the literal as written), {@code Boolean} and {@code null}.
 *
 * <p>Jackson's streaming parser does the reading (it refuses leading zeros, {@code NaN}, comments,
 * control characters and trailing garbage by default, and hands each number's literal); the
 * checks Jackson does not make (surrogates, overflow, depth, a second document) are made here.
 */
public final class Json {
    /** Documents nested up to 512 levels parse, as the oracle parses them; a deeper one is refused. */
    public static final int MAX_DEPTH = 513;

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(100_000)
                    .maxNumberLength(Integer.MAX_VALUE)
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxDocumentLength(-1)
                    .build())
            .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
            .build();

    private Json() {}

    /** Exactly one JSON document, nested at most 512 levels; {@link NotJson} otherwise. */
    public static Object parse(String text) throws NotJson {
        return parse(text, MAX_DEPTH);
    }

    /** {@link #parse} with another nesting limit (the protocol's own messages nest deeper than arguments). */
    public static Object parse(String text, int maxDepth) throws NotJson {
        if (!text.isEmpty() && text.charAt(0) == '\uFEFF') {
            throw new NotJson("a byte order mark is not JSON");
        }
        try (JsonParser p = FACTORY.createParser(text)) {
            JsonToken first = p.nextToken();
            if (first == null) {
                throw new NotJson("no JSON document");
            }
            Object value = read(p, first, maxDepth);
            JsonToken after;
            try {
                after = p.nextToken();
            } catch (JsonProcessingException e) {
                throw new NotJson("trailing characters after the document");
            }
            if (after != null) {
                throw new NotJson("trailing characters after the document");
            }
            return value;
        } catch (JsonProcessingException e) {
            throw new NotJson(e.getOriginalMessage());
        } catch (IOException e) {
            throw new NotJson(e.toString());
        }
    }

    // Iterative, so a deep document cannot overflow the stack: a frame per open container.
    private static Object read(JsonParser p, JsonToken token, int maxDepth) throws IOException, NotJson {
        Deque<Object> stack = new ArrayDeque<>();
        Deque<String> keys = new ArrayDeque<>();
        Object done = null;
        while (true) {
            Object value;
            boolean opened = false;
            switch (token) {
                case START_OBJECT -> {
                    value = new LinkedHashMap<String, Object>();
                    opened = true;
                }
                case START_ARRAY -> {
                    value = new ArrayList<Object>();
                    opened = true;
                }
                case END_OBJECT, END_ARRAY -> value = stack.pop();
                case VALUE_STRING -> value = string(p.getText(), "string");
                case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> value = number(p.getText());
                case VALUE_TRUE -> value = Boolean.TRUE;
                case VALUE_FALSE -> value = Boolean.FALSE;
                case VALUE_NULL -> value = null;
                case FIELD_NAME -> {
                    keys.push(string(p.currentName(), "key"));
                    token = p.nextToken();
                    continue;
                }
                default -> throw new NotJson("unexpected " + token);
            }
            if (opened) {
                if (stack.size() + 1 >= maxDepth) {
                    throw new NotJson("nested too deeply");
                }
                stack.push(value);
                token = p.nextToken();
                continue;
            }
            if (stack.isEmpty()) {
                done = value;
                break;
            }
            add(stack.peek(), keys, value);
            token = p.nextToken();
        }
        return done;
    }

    @SuppressWarnings("unchecked")
    private static void add(Object container, Deque<String> keys, Object value) {
        if (container instanceof Map<?, ?> m) {
            // A repeated key: the last one wins, as in serde_json.
            ((Map<String, Object>) m).put(keys.pop(), value);
        } else {
            ((List<Object>) container).add(value);
        }
    }

    private static String string(String s, String what) throws NotJson {
        if (hasLoneSurrogate(s)) {
            throw new NotJson("lone surrogate in a " + what);
        }
        return s;
    }

    private static JsonNumber number(String text) throws NotJson {
        // serde_json refuses a number that overflows a double (1e400), whatever its form.
        if (Double.isInfinite(Double.parseDouble(text))) {
            throw new NotJson("number out of range: " + (text.length() > 40 ? text.substring(0, 40) : text));
        }
        return new JsonNumber(text);
    }

    /** Whether {@code s} holds a surrogate that is not half of a pair (no Unicode text holds one). */
    public static boolean hasLoneSurrogate(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                } else {
                    return true;
                }
            } else if (Character.isLowSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Compact JSON text of {@code value}: maps (string keys), iterables, arrays of objects, strings,
     * {@link JsonNumber}s as written, other numbers by their exact text, booleans and null. Non-ASCII
     * is written as it is. Throws {@link IllegalArgumentException} for what JSON cannot hold: a
     * non-finite number, a lone surrogate, another kind of object.
     */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    /** {@link #write} into {@code out}. */
    public static void write(Object value, StringBuilder out) {
        // Iterative for the same reason as read: arguments may nest 512 deep.
        Deque<Object> work = new ArrayDeque<>();
        work.push(new Pending(value));
        while (!work.isEmpty()) {
            Object item = work.pop();
            if (item instanceof String s) {
                out.append(s); // punctuation queued by a container
                continue;
            }
            Object v = ((Pending) item).value;
            if (v == null) {
                out.append("null");
            } else if (v instanceof String s) {
                quote(s, out);
            } else if (v instanceof Boolean b) {
                out.append(b ? "true" : "false");
            } else if (v instanceof Number n) {
                number(n, out);
            } else if (v instanceof Map<?, ?> m) {
                out.append('{');
                List<Object> parts = new ArrayList<>();
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!(e.getKey() instanceof String k)) {
                        throw new IllegalArgumentException("a JSON object's key must be a string, not " + e.getKey());
                    }
                    StringBuilder key = new StringBuilder(first ? "" : ",");
                    quote(k, key);
                    key.append(':');
                    parts.add(key.toString());
                    parts.add(new Pending(e.getValue()));
                    first = false;
                }
                parts.add("}");
                for (int i = parts.size() - 1; i >= 0; i--) {
                    work.push(parts.get(i));
                }
            } else if (v instanceof Iterable<?> || v instanceof Object[]) {
                out.append('[');
                Iterator<?> it = v instanceof Iterable<?> iter ? iter.iterator() : List.of((Object[]) v).iterator();
                List<Object> parts = new ArrayList<>();
                boolean first = true;
                while (it.hasNext()) {
                    if (!first) {
                        parts.add(",");
                    }
                    parts.add(new Pending(it.next()));
                    first = false;
                }
                parts.add("]");
                for (int i = parts.size() - 1; i >= 0; i--) {
                    work.push(parts.get(i));
                }
            } else {
                throw new IllegalArgumentException(v.getClass().getName() + " is not JSON");
            }
        }
    }

    private record Pending(Object value) {}

    private static void number(Number n, StringBuilder out) {
        if (n instanceof JsonNumber j) {
            out.append(j.text());
        } else if (n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte
                || n instanceof BigInteger) {
            out.append(n);
        } else if (n instanceof BigDecimal d) {
            out.append(d);
        } else {
            double d = n.doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException(n + " is not JSON");
            }
            out.append(n instanceof Float f ? Float.toString(f) : Double.toString(d));
        }
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** {@code s} as a JSON string literal; a lone surrogate cannot be written. */
    public static void quote(String s, StringBuilder out) {
        if (hasLoneSurrogate(s)) {
            throw new IllegalArgumentException("a string with a lone surrogate is not JSON text");
        }
        out.append('"');
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 15]);
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** JSON equality: numbers by exact value, booleans never equal to numbers. */
    public static boolean equal(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            return toDecimal(x).compareTo(toDecimal(y)) == 0;
        }
        if (a instanceof List<?> x && b instanceof List<?> y) {
            if (x.size() != y.size()) {
                return false;
            }
            for (int i = 0; i < x.size(); i++) {
                if (!equal(x.get(i), y.get(i))) {
                    return false;
                }
            }
            return true;
        }
        if (a instanceof Map<?, ?> x && b instanceof Map<?, ?> y) {
            if (!x.keySet().equals(y.keySet())) {
                return false;
            }
            for (Map.Entry<?, ?> e : x.entrySet()) {
                if (!equal(e.getValue(), y.get(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }
        return a == null ? b == null : a.equals(b);
    }

    /** A number's exact value (a double by its shortest text). */
    public static BigDecimal toDecimal(Number n) {
        if (n instanceof JsonNumber j) {
            return j.decimal();
        }
        if (n instanceof BigDecimal d) {
            return d;
        }
        if (n instanceof BigInteger i) {
            return new BigDecimal(i);
        }
        if (n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte) {
            return BigDecimal.valueOf(n.longValue());
        }
        return new BigDecimal(Double.toString(n.doubleValue()));
    }
}
