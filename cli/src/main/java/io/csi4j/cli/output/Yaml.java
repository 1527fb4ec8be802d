package io.csi4j.cli.output;

import io.csi4j.driver.json.Json;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** Writes a {@link Json} tree as block-style YAML; strings that could read as anything else are double-quoted. */
public final class Yaml {
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z_/][A-Za-z0-9_./+=@()-]*( [A-Za-z0-9_./+=@()-]+)*");
    private static final Set<String> RESERVED = Set.of("true", "false", "yes", "no", "on", "off", "null", "y", "n", "~");

    private Yaml() {}

    public static String write(Object tree) {
        var sb = new StringBuilder();
        switch (tree) {
            case Map<?, ?> map when !map.isEmpty() -> map(sb, map, "");
            case List<?> list when !list.isEmpty() -> list(sb, list, "");
            default -> sb.append(scalar(tree)).append('\n');
        }
        return sb.toString();
    }

    private static void map(StringBuilder sb, Map<?, ?> map, String indent) {
        for (var e : map.entrySet()) {
            sb.append(indent).append(scalar(String.valueOf(e.getKey()))).append(':');
            nested(sb, e.getValue(), indent);
        }
    }

    private static void list(StringBuilder sb, List<?> list, String indent) {
        for (Object item : list) {
            sb.append(indent).append('-');
            if (item instanceof Map<?, ?> m && !m.isEmpty()) {
                // the first key goes on the dash line, the others line up under it
                var sub = new StringBuilder();
                map(sub, m, indent + "  ");
                sb.append(' ').append(sub.substring(indent.length() + 2));
            } else {
                nested(sb, item, indent);
            }
        }
    }

    private static void nested(StringBuilder sb, Object value, String indent) {
        switch (value) {
            case Map<?, ?> m when !m.isEmpty() -> {
                sb.append('\n');
                map(sb, m, indent + "  ");
            }
            case List<?> l when !l.isEmpty() -> {
                sb.append('\n');
                list(sb, l, indent + "  ");
            }
            default -> sb.append(' ').append(scalar(value)).append('\n');
        }
    }

    static String scalar(Object value) {
        return switch (value) {
            case null -> "null";
            case Map<?, ?> m -> "{}";
            case List<?> l -> "[]";
            case Number n -> n.toString();
            case Boolean b -> b.toString();
            case String s when PLAIN.matcher(s).matches() && !RESERVED.contains(s.toLowerCase()) -> s;
            default -> {
                var sb = new StringBuilder();
                sb.append(Json.quote(value.toString()));
                yield sb.toString();
            }
        };
    }
}
