package io.csi4j.driver.catalog;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The two JSON shapes the catalog stores: an object of strings and an array of strings. Encoding is
 * canonical (keys sorted) and exact for any Java string: control characters and unpaired surrogates
 * are written as {@code \\uXXXX}, so nothing is lost on the way through SQLite's UTF-8 text.
 */
final class Json {
    private Json() {}

    static String encodeMap(Map<String, String> map) {
        StringBuilder out = new StringBuilder(2 + map.size() * 16).append('{');
        boolean first = true;
        for (Map.Entry<String, String> e : new TreeMap<>(map).entrySet()) {
            if (!first) out.append(',');
            first = false;
            appendString(out, e.getKey());
            out.append(':');
            appendString(out, e.getValue());
        }
        return out.append('}').toString();
    }

    static String encodeList(List<String> list) {
        StringBuilder out = new StringBuilder(2 + list.size() * 16).append('[');
        for (int i = 0; i < list.size(); i++) {
            if (i > 0) out.append(',');
            appendString(out, list.get(i));
        }
        return out.append(']').toString();
    }

    /** @throws IllegalArgumentException if {@code text} is not a JSON object whose values are all strings */
    static Map<String, String> decodeMap(String text) {
        if ("{}".equals(text)) return Map.of();  // most maps, read for every row of a page
        Parser p = new Parser(text);
        Map<String, String> map = new LinkedHashMap<>();
        p.expect('{');
        if (!p.consume('}')) {
            do {
                String key = p.string();
                p.expect(':');
                if (map.put(key, p.string()) != null) throw p.error("duplicate key");
            } while (p.consume(','));
            p.expect('}');
        }
        p.end();
        return Map.copyOf(map);
    }

    /** @throws IllegalArgumentException if {@code text} is not a JSON array of strings */
    static List<String> decodeList(String text) {
        Parser p = new Parser(text);
        List<String> list = new ArrayList<>();
        p.expect('[');
        if (!p.consume(']')) {
            do {
                list.add(p.string());
            } while (p.consume(','));
            p.expect(']');
        }
        p.end();
        return List.copyOf(list);
    }

    private static void appendString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
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
                    if (c < 0x20 || c == 0x7f) {
                        appendEscaped(out, c);
                    } else if (Character.isHighSurrogate(c) && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1))) {
                        out.append(c).append(s.charAt(++i));  // a valid pair: plain UTF-8 in the database
                    } else if (Character.isSurrogate(c)) {
                        appendEscaped(out, c);  // unpaired: UTF-8 cannot carry it, the escape can
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static void appendEscaped(StringBuilder out, char c) {
        out.append("\\u");
        String hex = Integer.toHexString(c);
        out.repeat('0', 4 - hex.length()).append(hex);
    }

    private static final class Parser {
        private final String text;
        private int pos;

        Parser(String text) {
            this.text = text;
        }

        void expect(char c) {
            if (!consume(c)) throw error("expected '" + c + "'");
        }

        boolean consume(char c) {
            skipSpace();
            if (pos < text.length() && text.charAt(pos) == c) {
                pos++;
                return true;
            }
            return false;
        }

        void end() {
            skipSpace();
            if (pos != text.length()) throw error("trailing characters");
        }

        String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                if (pos >= text.length()) throw error("unterminated string");
                char c = text.charAt(pos++);
                if (c == '"') return out.toString();
                if (c < 0x20) throw error("raw control character in string");
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (pos >= text.length()) throw error("unterminated escape");
                char e = text.charAt(pos++);
                switch (e) {
                    case '"', '\\', '/' -> out.append(e);
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        if (pos + 4 > text.length()) throw error("short \\u escape");
                        int code = 0;
                        for (int i = 0; i < 4; i++) {
                            int digit = Character.digit(text.charAt(pos++), 16);
                            if (digit < 0) throw error("bad hex digit in \\u escape");
                            code = code * 16 + digit;
                        }
                        out.append((char) code);
                    }
                    default -> throw error("unknown escape \\" + e);
                }
            }
        }

        private void skipSpace() {
            while (pos < text.length()) {
                char c = text.charAt(pos);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
                pos++;
            }
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException("malformed JSON at offset " + pos + ": " + what);
        }
    }
}
