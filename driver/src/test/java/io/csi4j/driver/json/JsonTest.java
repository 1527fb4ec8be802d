package io.csi4j.driver.json;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class JsonTest {
    /** A map with every awkward kind of string, and (below) its text as the hand-written codec before Gson stored it. */
    private static final Map<String, String> AWKWARD = Map.of(
            "quote\"key", "a \"quoted\" value",
            "back\\slash", "C:\\dir\\file \\u0041 not an escape",
            "unicode", "héllo wörld — 日本語 🚀 \uD83D\uDE00",
            "controls", "\u0000\u0001\b\f\n\r\t\u001f\u007f end",
            "lone surrogates", "\uD800 x \uDC00 y \uDBFF",
            "", "empty key",
            "json-looking", "{\"a\":[1,2]}, /slash/ \u2028\u2029");

    private static final String AWKWARD_AS_STORED_BEFORE = "{\"\":\"empty key\",\"back\\\\slash\":\"C:\\\\dir\\\\file \\\\u0041 not an "
            + "escape\",\"controls\":\"\\u0000\\u0001\\b\\f\\n\\r\\t\\u001f\\u007f end\",\"json-looking\":\"{\\\"a\\\":[1,2]}, /slash/ "
            + "\u2028\u2029\",\"lone surrogates\":\"\\ud800 x \\udc00 y \\udbff\",\"quote\\\"key\":\"a \\\"quoted\\\" value\","
            + "\"unicode\":\"h\u00e9llo w\u00f6rld \u2014 \u65e5\u672c\u8a9e \ud83d\ude80 \ud83d\ude00\"}";

    @Test
    void readsWhatTheCatalogStoredBefore() {
        assertEquals(AWKWARD, Json.parseStringMap(AWKWARD_AS_STORED_BEFORE));
        assertEquals(List.of("a", "\uDFFF", "\""), Json.parseStringList("[\"a\",\"\\udfff\",\"\\\"\"]"));
    }

    @Test
    void roundTripsAwkwardStrings() {
        Map<String, String> map = new HashMap<>(AWKWARD);
        map.put("empty value", "");
        String json = Json.writeSorted(map);
        assertEquals(map, Json.parseStringMap(json));
        for (char c = 0; c < 0x20; c++) {
            assertEquals(-1, json.indexOf(c), "raw control char " + (int) c + " in " + json);
        }
        assertEquals(json, throughUtf8(json), "an unpaired surrogate must be escaped: UTF-8 cannot carry it");
    }

    @Test
    void encodingIsCanonical() {
        assertEquals("{}", Json.writeSorted(Map.of()));
        assertEquals("{\"a\":\"1\",\"b\":\"2\"}", Json.writeSorted(new HashMap<>(Map.of("b", "2", "a", "1"))));
        assertEquals("{\"k\":\"\\u0000\\\"\\\\\\n\"}", Json.writeSorted(Map.of("k", "\0\"\\\n")));
        assertEquals("[]", Json.write(List.of()));
        assertEquals("[\"x\",\"y\\\"\"]", Json.write(List.of("x", "y\"")));
    }

    @Test
    void decodesWhatOtherEncodersWrite() {
        assertEquals(Map.of("a", "é/\uD83D\uDE00", "b", "\t"),
                Json.parseStringMap(" { \"a\" : \"\\u00e9\\/\\ud83d\\ude00\" ,\n \"b\":\"\\t\" } "));
        assertEquals(List.of("a", "", "\"c"), Json.parseStringList("[ \"a\", \"\" ,\"\\\"c\" ]"));
    }

    @Test
    void roundTripsRandomStrings() {
        Random random = new Random(42);
        for (int round = 0; round < 2000; round++) {
            Map<String, String> map = new HashMap<>();
            for (int i = random.nextInt(5); i > 0; i--) map.put(randomString(random), randomString(random));
            assertEquals(map, Json.parseStringMap(throughUtf8(Json.writeSorted(map))));
            List<String> list = List.of(randomString(random), randomString(random));
            assertEquals(list, Json.parseStringList(throughUtf8(Json.write(list))));
        }
    }

    @Test
    void refusesMalformedInput() {
        for (String bad : List.of("", "{", "}", "[", "{\"a\"}", "{\"a\":1}", "{\"a\":\"b\",}", "{\"a\":\"b\"} x",
                "{\"a\":\"b\",\"a\":\"c\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\u12g4\"}",
                "{\"a\":\"raw\ttab\"}", "{\"a\":\"unterminated}", "[\"a\" \"b\"]", "[1]", "null")) {
            assertThrows(IllegalArgumentException.class, () -> Json.parseStringMap(bad.startsWith("[") ? "x" : bad),
                    () -> "accepted " + bad);
            if (bad.startsWith("[")) {
                assertThrows(IllegalArgumentException.class, () -> Json.parseStringList(bad), () -> "accepted " + bad);
            }
        }
    }

    @Test
    void documentsRoundTrip() {
        String text = "{\"a\": [1, 2.5, -3e2, true, false, null], \"b\": {\"c\": \"q\\\"u\\\\o\\nte\\u00e9\"}, \"d\": {}, \"e\": []}";
        Object tree = Json.parse(text);
        var map = (Map<?, ?>) tree;
        assertEquals(List.of(new BigDecimal("1"), new BigDecimal("2.5"), new BigDecimal("-3e2"), true, false),
                ((List<?>) map.get("a")).subList(0, 5));
        assertNull(((List<?>) map.get("a")).get(5));
        assertEquals("q\"u\\o\nteé", ((Map<?, ?>) map.get("b")).get("c"));
        assertEquals(tree, Json.parse(Json.writePretty(tree)));
        assertEquals(tree, Json.parse(Json.write(tree)));
        for (String bad : new String[] {"", "{", "[1,]", "{\"a\" 1}", "tru", "\"open", "1 2"}) {
            assertThrows(IllegalArgumentException.class, () -> Json.parse(bad), bad);
        }
    }

    @Test
    void prettyIsTwoSpacesInMapOrder() {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("z", List.of(1L, "x"));
        doc.put("a", Map.of());
        doc.put("nan", Double.NaN);
        assertEquals("{\n  \"z\": [\n    1,\n    \"x\"\n  ],\n  \"a\": {},\n  \"nan\": null\n}", Json.writePretty(doc));
        assertEquals("\"a\\\"b\"", Json.quote("a\"b"));
    }

    /** What SQLite's text column and a sidecar file keep of a string. */
    private static String throughUtf8(String s) {
        return new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
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
