package dev.toolcert.adapter;

import java.math.BigDecimal;
import java.util.Objects;

/**
 * A JSON number that keeps the literal it was read from.
 *
 * <p>{@link Json#parse} makes one for every number, so a dispatched argument keeps the exact
 * decimal value the model wrote ({@code 12345678901234567890123}, {@code 0.1000000000000000000001})
 * and its spelling ({@code 1.0} stays {@code 1.0}): {@link Json#write} writes {@link #text()}
 * back unchanged. Two numbers are equal when their values are ({@code 1.0} equals {@code 1}).
 */
public final class JsonNumber extends Number implements Comparable<JsonNumber> {
    private static final long serialVersionUID = 1L;

    private final String text;
    private transient BigDecimal value;

    /** A number from its JSON literal; the literal is not checked (use {@link Json#parse}). */
    public JsonNumber(String text) {
        this.text = Objects.requireNonNull(text);
    }

    /** The literal as written. */
    public String text() {
        return text;
    }

    /** The exact value. */
    public BigDecimal decimal() {
        if (value == null) {
            value = new BigDecimal(text);
        }
        return value;
    }

    /** The number's kind as docs/PROTOCOL.md names it: integer when it has neither fraction nor exponent. */
    public boolean isIntegerKind() {
        return text.indexOf('.') < 0 && text.indexOf('e') < 0 && text.indexOf('E') < 0;
    }

    /** Whether the value is a whole number ({@code 1}, {@code 1.0}, {@code 1e2}), as JSON Schema's integer means it. */
    public boolean isIntegral() {
        BigDecimal d = decimal();
        return d.signum() == 0 || d.stripTrailingZeros().scale() <= 0;
    }

    @Override
    public int intValue() {
        return decimal().intValue();
    }

    @Override
    public long longValue() {
        return decimal().longValue();
    }

    @Override
    public float floatValue() {
        return decimal().floatValue();
    }

    @Override
    public double doubleValue() {
        return Double.parseDouble(text);
    }

    @Override
    public int compareTo(JsonNumber o) {
        return decimal().compareTo(o.decimal());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JsonNumber n && decimal().compareTo(n.decimal()) == 0;
    }

    @Override
    public int hashCode() {
        BigDecimal d = decimal();
        return d.signum() == 0 ? 0 : d.stripTrailingZeros().hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
