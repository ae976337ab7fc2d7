package dev.toolcert.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The strict parse and the writer: numbers kept as written, what RFC 8259 refuses refused. */
class JsonTest {
    @ParameterizedTest
    @ValueSource(strings = {
        "{\"a\":1.0}",
        "{\"a\":12345678901234567890123}",
        "{\"a\":0.1000000000000000000001}",
        "{\"a\":-0}",
        "{\"a\":-0.0}",
        "{\"a\":1E+2,\"b\":1e-400}",
        "{\"a\":9007199254740993}",
        "[1,2.50,\"x\",null,true,false,{}]",
        "\"caf\u00e9 \ud83d\ude00\"",
        "{\"a\":\"\\u0000\\\"\\\\\\n\"}",
    })
    void numbersAndStringsAreWrittenBackAsWritten(String text) throws NotJson {
        assertEquals(text, Json.write(Json.parse(text)));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"a\": NaN}", "{\"a\": Infinity}", "{\"a\": -Infinity}", "{\"a\": 1e400}", "{\"a\": -1e400}",
        "{\"a\": \"\\ud800\"}", "{\"\\udc00\": 1}", "\"\\ud800\\ud800\"", "{\"a\": 1} x", "{\"a\": 1}{\"b\": 2}",
        "", " ", "{", "{\"a\": 01}", "1.", ".5", "+1", "0x1F", "1e", "-", "[1,]", "{\"a\":1,}", "'a'",
        "\"a\u0001\"", "// c\n1", "\ufeff{}", "[1]\u000b",
    })
    void whatSerdeJsonRefusesIsRefused(String text) {
        assertThrows(NotJson.class, () -> Json.parse(text));
    }

    @Test
    void nestingUpTo512IsReadAndDeeperRefused() throws NotJson {
        String ok = "[".repeat(512) + "]".repeat(512);
        assertEquals(ok, Json.write(Json.parse(ok)));
        assertThrows(NotJson.class, () -> Json.parse("[".repeat(513) + "]".repeat(513)));
        assertThrows(NotJson.class, () -> Json.parse("{\"a\":".repeat(513) + "1" + "}".repeat(513)));
    }

    @Test
    void aKeyWrittenTwiceKeepsItsLastValue() throws NotJson {
        Object v = Json.parse("{\"a\": 1, \"b\": 2, \"a\": 3}");
        assertEquals("{\"a\":3,\"b\":2}", Json.write(v));
    }

    @Test
    void numbersCompareByExactValueAndKeepTheirKind() throws NotJson {
        JsonNumber n = assertInstanceOf(JsonNumber.class, Json.parse("0.1000000000000000000001"));
        assertEquals("0.1000000000000000000001", n.text());
        assertFalse(Json.equal(n, 0.1));
        assertTrue(Json.equal(Json.parse("1.0"), 1));
        assertTrue(Json.equal(Json.parse("-0.0"), Json.parse("0")));
        assertFalse(Json.equal(Json.parse("9007199254740993"), Json.parse("9007199254740992")));
        assertTrue(((JsonNumber) Json.parse("1e2")).isIntegral());
        assertFalse(((JsonNumber) Json.parse("1e2")).isIntegerKind());
        assertTrue(((JsonNumber) Json.parse("-0")).isIntegerKind());
    }

    @Test
    void writeRefusesWhatJsonCannotHold() {
        assertThrows(IllegalArgumentException.class, () -> Json.write(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> Json.write(Double.POSITIVE_INFINITY));
        assertThrows(IllegalArgumentException.class, () -> Json.write("\ud800"));
        assertThrows(IllegalArgumentException.class, () -> Json.write(Map.of("a", new Object())));
        assertEquals("[1,2.5,\"x\"]", Json.write(List.of(1, 2.5, "x")));
    }
}
