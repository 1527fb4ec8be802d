package io.csi4j.testkit.suite;

import static io.csi4j.testkit.suite.Verdicts.check;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The spec's general size limits, which bind the plugin's answers as much as the CO's requests:
 * a string at most 128 bytes, a map&lt;string, string&gt; at most 4 KiB.
 */
final class Limits {
    private Limits() {}

    static final int STRING = 128;
    static final int MAP = 4096;

    static int bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    /** An id the plugin generated: REQUIRED, so non-empty, and within the string limit. */
    static void id(String id, String field) {
        check(bytes(id) <= STRING, "Size limits: " + field + " (a string) SHALL NOT exceed 128 bytes", () -> bytes(id) + " bytes");
    }

    static void map(Map<String, String> map, String field) {
        int size = map.entrySet().stream().mapToInt(e -> bytes(e.getKey()) + bytes(e.getValue())).sum();
        check(size <= MAP, "Size limits: " + field + " (a map<string, string>) SHALL NOT exceed 4 KiB", () -> size + " bytes");
    }
}
