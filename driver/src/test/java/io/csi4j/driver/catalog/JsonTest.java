package io.csi4j.driver.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class JsonTest {

    @Test
    void roundTripsAwkwardStrings() {
        Map<String, String> map = Map.of(
                "quote\"key", "a \"quoted\" value",
                "back\\slash", "C:\\dir\\file \\u0041 not an escape",
                "unicode", "héllo wörld — 日本語 🚀 \uD83D\uDE00",
                "controls", "\u0000\u0001\b\f\n\r\t\u001f\u007f end",
                "lone surrogates", "\uD800 x \uDC00 y \uDBFF",
                "", "empty key",
                "empty value", "",
                "json-looking", "{\"a\":[1,2]}, /slash/ \u2028\u2029");
        String json = Json.encodeMap(map);
        assertEquals(map, Json.decodeMap(json));
        for (char c = 0; c < 0x20; c++) {
            assertEquals(-1, json.indexOf(c), "raw control char " + (int) c + " in " + json);
        }
    }

    @Test
    void encodingIsCanonical() {
        assertEquals("{}", Json.encodeMap(Map.of()));
        assertEquals("{\"a\":\"1\",\"b\":\"2\"}", Json.encodeMap(new HashMap<>(Map.of("b", "2", "a", "1"))));
        assertEquals("{\"k\":\"\\u0000\\\"\\\\\\n\"}", Json.encodeMap(Map.of("k", "\0\"\\\n")));
        assertEquals("[]", Json.encodeList(List.of()));
        assertEquals("[\"x\",\"y\\\"\"]", Json.encodeList(List.of("x", "y\"")));
    }

    @Test
    void decodesWhatOtherEncodersWrite() {
        assertEquals(Map.of("a", "é/\uD83D\uDE00", "b", "\t"),
                Json.decodeMap(" { \"a\" : \"\\u00e9\\/\\ud83d\\ude00\" ,\n \"b\":\"\\t\" } "));
        assertEquals(List.of("a", "", "\"c"), Json.decodeList("[ \"a\", \"\" ,\"\\\"c\" ]"));
    }

    @Test
    void roundTripsRandomStrings() {
        Random random = new Random(42);
        for (int round = 0; round < 2000; round++) {
            Map<String, String> map = new HashMap<>();
            for (int i = random.nextInt(5); i > 0; i--) map.put(randomString(random), randomString(random));
            assertEquals(map, Json.decodeMap(Json.encodeMap(map)));
            List<String> list = List.of(randomString(random), randomString(random));
            assertEquals(list, Json.decodeList(Json.encodeList(list)));
        }
    }

    @Test
    void refusesMalformedInput() {
        for (String bad : List.of("", "{", "}", "[", "{\"a\"}", "{\"a\":1}", "{\"a\":\"b\",}", "{\"a\":\"b\"} x",
                "{\"a\":\"b\",\"a\":\"c\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\u12g4\"}",
                "{\"a\":\"raw\ttab\"}", "{\"a\":\"unterminated}", "[\"a\" \"b\"]", "[1]", "null")) {
            assertThrows(IllegalArgumentException.class, () -> Json.decodeMap(bad.startsWith("[") ? "x" : bad),
                    () -> "accepted " + bad);
            if (bad.startsWith("[")) {
                assertThrows(IllegalArgumentException.class, () -> Json.decodeList(bad), () -> "accepted " + bad);
            }
        }
    }

    private static String randomString(Random random) {
        StringBuilder s = new StringBuilder();
        for (int i = random.nextInt(12); i > 0; i--) {
            s.append(switch (random.nextInt(4)) {
                case 0 -> (char) random.nextInt(0x80);          // ASCII incl. controls, quotes, backslash
                case 1 -> (char) random.nextInt(0x10000);        // any UTF-16 unit, surrogates included
                case 2 -> "\"\\";
                default -> new String(Character.toChars(0x10000 + random.nextInt(0x100000)));
            });
        }
        return s.toString();
    }
}
