package io.csi4j.driver.json;

import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.JsonWriter;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * JSON as plain Java values, read and written by Gson's streaming reader and writer: objects are
 * {@code Map<String,Object>} in document order, arrays {@code List<Object>}, then {@code String},
 * {@code BigDecimal}, {@code Boolean} and {@code null}. Reading is strict (RFC 8259, and no duplicate keys:
 * a row or a sidecar that says one thing twice is damaged). Writing is exact for any Java string: an
 * unpaired surrogate, which UTF-8 (SQLite's text, a sidecar file) cannot carry, is written as {@code \\uXXXX}.
 */
public final class Json {
    private Json() {}

    /** @throws IllegalArgumentException if {@code text} is not one well-formed JSON document */
    public static Object parse(String text) {
        try (JsonReader in = new JsonReader(new StringReader(text))) {
            in.setStrictness(Strictness.STRICT);
            Object value = read(in);
            if (in.peek() != JsonToken.END_DOCUMENT) throw new IllegalArgumentException("trailing characters");
            return value;
        } catch (IOException | IllegalStateException | NumberFormatException e) {
            throw new IllegalArgumentException("malformed JSON: " + e.getMessage(), e);
        }
    }

    /** @throws IllegalArgumentException if {@code text} is not a JSON object whose values are all strings */
    public static Map<String, String> parseStringMap(String text) {
        if ("{}".equals(text)) return Map.of();  // most maps: read for every row of a page
        if (!(parse(text) instanceof Map<?, ?> map)) throw new IllegalArgumentException("not a JSON object: " + text);
        Map<String, String> strings = new LinkedHashMap<>();
        map.forEach((key, value) -> strings.put((String) key, string(value, text)));
        return Collections.unmodifiableMap(strings);
    }

    /** @throws IllegalArgumentException if {@code text} is not a JSON array of strings */
    public static List<String> parseStringList(String text) {
        if (!(parse(text) instanceof List<?> list)) throw new IllegalArgumentException("not a JSON array: " + text);
        return list.stream().map(value -> string(value, text)).toList();
    }

    /** One line, maps in their iteration order (give a sorted map for a canonical text). */
    public static String write(Object value) {
        return write(value, "");
    }

    /** One line, keys sorted: one text per map, so equal maps make equal rows. */
    public static String writeSorted(Map<String, ?> map) {
        return write(new TreeMap<>(map));
    }

    /** Two-space indented, maps in their iteration order: documents people read (bench reports). */
    public static String writePretty(Object value) {
        return write(value, "  ");
    }

    /** {@code s} as a JSON string literal, quotes included. */
    public static String quote(String s) {
        return write(s);
    }

    private static String write(Object value, String indent) {
        StringWriter text = new StringWriter();
        try (JsonWriter out = new JsonWriter(text)) {
            out.setIndent(indent);
            out.setHtmlSafe(false);
            write(out, value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);  // a StringWriter does not fail
        }
        return escapeUnpairedSurrogates(text.toString());
    }

    private static Object read(JsonReader in) throws IOException {
        return switch (in.peek()) {
            case BEGIN_OBJECT -> {
                Map<String, Object> map = new LinkedHashMap<>();
                in.beginObject();
                while (in.hasNext()) {
                    String key = in.nextName();
                    if (map.containsKey(key)) throw new IllegalArgumentException("duplicate key " + quote(key));
                    map.put(key, read(in));
                }
                in.endObject();
                yield map;
            }
            case BEGIN_ARRAY -> {
                List<Object> list = new ArrayList<>();
                in.beginArray();
                while (in.hasNext()) list.add(read(in));
                in.endArray();
                yield list;
            }
            case STRING -> in.nextString();
            case NUMBER -> new BigDecimal(in.nextString());
            case BOOLEAN -> in.nextBoolean();
            case NULL -> {
                in.nextNull();
                yield null;
            }
            default -> throw new IllegalArgumentException("unexpected " + in.peek() + " " + in.getPath());
        };
    }

    private static void write(JsonWriter out, Object value) throws IOException {
        switch (value) {
            case null -> out.nullValue();
            case Map<?, ?> map -> {
                out.beginObject();
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    out.name(String.valueOf(e.getKey()));
                    write(out, e.getValue());
                }
                out.endObject();
            }
            case List<?> list -> {
                out.beginArray();
                for (Object item : list) write(out, item);
                out.endArray();
            }
            case String s -> out.value(s);
            case Boolean b -> out.value(b);
            case Double d when d.isNaN() || d.isInfinite() -> out.nullValue();  // JSON has no such number
            case Float f when f.isNaN() || f.isInfinite() -> out.nullValue();
            case Number n -> out.value(n);
            default -> out.value(value.toString());
        }
    }

    private static String string(Object value, String text) {
        if (value instanceof String s) return s;
        throw new IllegalArgumentException("not a string: " + value + " in " + text);
    }

    /** Every char of the writer's output outside the ASCII range is inside a string literal. */
    private static String escapeUnpairedSurrogates(String json) {
        int i = 0;
        while (i < json.length() && !Character.isSurrogate(json.charAt(i))) i++;
        if (i == json.length()) return json;
        StringBuilder out = new StringBuilder(json.length() + 16).append(json, 0, i);
        for (; i < json.length(); i++) {
            char c = json.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < json.length() && Character.isLowSurrogate(json.charAt(i + 1))) {
                out.append(c).append(json.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                out.append("\\u").append(Integer.toHexString(c));  // surrogates are d800-dfff: four digits
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
