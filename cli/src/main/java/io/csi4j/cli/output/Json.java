package io.csi4j.cli.output;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader and writer for the cli's own documents (bench reports, secrets files) and for
 * turning protobuf JSON into YAML. Values are {@code Map<String,Object>} (insertion ordered),
 * {@code List<Object>}, {@code String}, {@code BigDecimal}, {@code Boolean} and {@code null}.
 */
public final class Json {
    private final String text;
    private int at;

    private Json(String text) {
        this.text = text;
    }

    /** Parses one JSON document; throws {@link IllegalArgumentException} naming the offset of the first error. */
    public static Object parse(String text) {
        Json p = new Json(text);
        p.skipSpace();
        Object value = p.value();
        p.skipSpace();
        if (p.at != text.length()) throw p.error("trailing characters");
        return value;
    }

    private Object value() {
        if (at >= text.length()) throw error("unexpected end");
        char c = text.charAt(at);
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", Boolean.TRUE);
            case 'f' -> literal("false", Boolean.FALSE);
            case 'n' -> literal("null", null);
            default -> number();
        };
    }

    private Map<String, Object> object() {
        var map = new LinkedHashMap<String, Object>();
        at++;
        skipSpace();
        if (peek('}')) return map;
        while (true) {
            skipSpace();
            if (at >= text.length() || text.charAt(at) != '"') throw error("expected a key");
            String key = string();
            skipSpace();
            expect(':');
            skipSpace();
            map.put(key, value());
            skipSpace();
            if (peek('}')) return map;
            expect(',');
        }
    }

    private List<Object> array() {
        var list = new ArrayList<Object>();
        at++;
        skipSpace();
        if (peek(']')) return list;
        while (true) {
            skipSpace();
            list.add(value());
            skipSpace();
            if (peek(']')) return list;
            expect(',');
        }
    }

    private String string() {
        at++;
        var sb = new StringBuilder();
        while (at < text.length()) {
            char c = text.charAt(at++);
            if (c == '"') return sb.toString();
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (at >= text.length()) break;
            char e = text.charAt(at++);
            switch (e) {
                case 'n' -> sb.append('\n');
                case 't' -> sb.append('\t');
                case 'r' -> sb.append('\r');
                case 'b' -> sb.append('\b');
                case 'f' -> sb.append('\f');
                case 'u' -> {
                    if (at + 4 > text.length()) throw error("short \\u escape");
                    sb.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                    at += 4;
                }
                default -> sb.append(e);
            }
        }
        throw error("unterminated string");
    }

    private Object literal(String word, Object value) {
        if (!text.startsWith(word, at)) throw error("unexpected character");
        at += word.length();
        return value;
    }

    private BigDecimal number() {
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
        try {
            return new BigDecimal(text.substring(start, at));
        } catch (NumberFormatException e) {
            at = start;
            throw error("unexpected character");
        }
    }

    private boolean peek(char c) {
        if (at < text.length() && text.charAt(at) == c) {
            at++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!peek(c)) throw error("expected '" + c + "'");
    }

    private void skipSpace() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("invalid JSON at offset " + at + ": " + what);
    }

    // ---- writing ----

    /** Pretty JSON, two-space indent, keys in map order. */
    public static String write(Object value) {
        var sb = new StringBuilder();
        write(sb, value, "");
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object value, String indent) {
        switch (value) {
            case null -> sb.append("null");
            case Map<?, ?> map when map.isEmpty() -> sb.append("{}");
            case Map<?, ?> map -> {
                sb.append("{\n");
                int i = 0;
                for (var e : map.entrySet()) {
                    sb.append(indent).append("  ");
                    quote(sb, String.valueOf(e.getKey()));
                    sb.append(": ");
                    write(sb, e.getValue(), indent + "  ");
                    sb.append(++i < map.size() ? ",\n" : "\n");
                }
                sb.append(indent).append('}');
            }
            case List<?> list when list.isEmpty() -> sb.append("[]");
            case List<?> list -> {
                sb.append("[\n");
                for (int i = 0; i < list.size(); i++) {
                    sb.append(indent).append("  ");
                    write(sb, list.get(i), indent + "  ");
                    sb.append(i + 1 < list.size() ? ",\n" : "\n");
                }
                sb.append(indent).append(']');
            }
            case String s -> quote(sb, s);
            case Double d when d.isNaN() || d.isInfinite() -> sb.append("null");
            case Number n -> sb.append(n);
            case Boolean b -> sb.append(b);
            default -> quote(sb, value.toString());
        }
    }

    static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) sb.append("\\u%04x".formatted((int) c));
                    else sb.append(c);
                }
            }
        }
        sb.append('"');
    }
}
