package dev.toolcert.adapter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** SSE from transport chunks cut anywhere: inside a character, between CR and LF. */
class SseDecoderTest {
    private static List<Map<String, Object>> decode(byte[] all, int... cuts) throws TurnError {
        SseDecoder d = new SseDecoder();
        List<Map<String, Object>> out = new ArrayList<>();
        int from = 0;
        for (int cut : cuts) {
            byte[] chunk = java.util.Arrays.copyOfRange(all, from, cut);
            out.addAll(d.feed(chunk));
            from = cut;
        }
        out.addAll(d.feed(java.util.Arrays.copyOfRange(all, from, all.length)));
        d.finish();
        return out;
    }

    @Test
    void everyCutGivesTheSameEvents() throws TurnError {
        byte[] all = "\ufeff: hi\r\nevent: a\r\ndata: caf\u00e9\r\ndata:x\r\n\r\nid: 7\ndata: \ud83d\ude00\n\n"
                .getBytes(StandardCharsets.UTF_8);
        List<Map<String, Object>> whole = decode(all);
        assertEquals(2, whole.size());
        assertEquals("a", whole.get(0).get("event"));
        assertEquals("caf\u00e9\nx", whole.get(0).get("data"));
        assertEquals("7", whole.get(1).get("id"));
        assertEquals("\ud83d\ude00", whole.get(1).get("data"));
        for (int i = 0; i <= all.length; i++) {
            for (int j = i; j <= all.length; j += 3) {
                assertEquals(whole, decode(all, i, j), "cut at " + i + ", " + j);
            }
        }
    }

    @Test
    void invalidUtf8IsMalformed() {
        byte[] bad = {'d', 'a', 't', 'a', ':', (byte) 0xff, '\n', '\n'};
        TurnError e = assertThrows(TurnError.class, () -> decode(bad));
        assertEquals("malformed", e.cls());
        byte[] cutShort = {'d', 'a', 't', 'a', ':', (byte) 0xc3, '\n', '\n'};
        assertEquals("malformed", assertThrows(TurnError.class, () -> decode(cutShort, 6)).cls());
        byte[] endsInside = {'d', 'a', 't', 'a', ':', (byte) 0xe2, (byte) 0x82};
        assertEquals("malformed", assertThrows(TurnError.class, () -> decode(endsInside)).cls());
    }
}
