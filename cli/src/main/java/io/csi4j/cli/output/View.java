package io.csi4j.cli.output;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** What the default (table) output shows: a line, aligned fields, a grid with a header, or several of them. */
public sealed interface View {

    /** One line of text. */
    record Line(String text) implements View {}

    /** {@code name: value} pairs with the values lined up. */
    record Fields(List<Field> fields) implements View {
        public Fields {
            fields = List.copyOf(fields);
        }
    }

    record Field(String name, String value) {}

    /** A table: upper-case header, one row per object; {@code whenEmpty} stands in for no rows. */
    record Grid(List<String> header, List<List<String>> rows, String whenEmpty) implements View {
        public Grid {
            header = List.copyOf(header);
            rows = rows.stream().map(List::copyOf).toList();
        }
    }

    /** Several views, separated by a blank line. */
    record Stack(List<View> parts) implements View {
        public Stack {
            parts = List.copyOf(parts);
        }
    }

    static View line(String text) {
        return new Line(text);
    }

    static View stack(View... parts) {
        return new Stack(Arrays.asList(parts));
    }

    static FieldsBuilder fields() {
        return new FieldsBuilder();
    }

    static GridBuilder grid(String... header) {
        return new GridBuilder(List.of(header));
    }

    final class FieldsBuilder {
        private final List<Field> fields = new ArrayList<>();

        public FieldsBuilder add(String name, Object value) {
            fields.add(new Field(name, String.valueOf(value)));
            return this;
        }

        /** Adds the field only when the value says something (not empty). */
        public FieldsBuilder addIf(String name, String value) {
            if (value != null && !value.isEmpty()) add(name, value);
            return this;
        }

        public Fields build() {
            return new Fields(fields);
        }
    }

    final class GridBuilder {
        private final List<String> header;
        private final List<List<String>> rows = new ArrayList<>();

        GridBuilder(List<String> header) {
            this.header = header;
        }

        public GridBuilder row(Object... cells) {
            rows.add(Arrays.stream(cells).map(String::valueOf).toList());
            return this;
        }

        public Grid build(String whenEmpty) {
            return new Grid(header, rows, whenEmpty);
        }
    }

    /** Renders for a terminal. */
    default void render(PrintWriter out) {
        switch (this) {
            case Line l -> out.println(l.text());
            case Fields f -> {
                int width = f.fields().stream().mapToInt(x -> x.name().length()).max().orElse(0) + 1;
                for (Field x : f.fields()) out.println(pad(x.name() + ":", width) + " " + x.value());
            }
            case Grid g when g.rows().isEmpty() -> out.println(g.whenEmpty());
            case Grid g -> {
                int[] widths = new int[g.header().size()];
                for (int i = 0; i < widths.length; i++) widths[i] = g.header().get(i).length();
                for (var row : g.rows()) {
                    for (int i = 0; i < widths.length && i < row.size(); i++) widths[i] = Math.max(widths[i], row.get(i).length());
                }
                out.println(row(g.header(), widths));
                for (var r : g.rows()) out.println(row(r, widths));
            }
            case Stack s -> {
                for (int i = 0; i < s.parts().size(); i++) {
                    if (i > 0) out.println();
                    s.parts().get(i).render(out);
                }
            }
        }
        out.flush();
    }

    private static String row(List<String> cells, int[] widths) {
        var sb = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            boolean last = i == cells.size() - 1;
            sb.append(last ? cells.get(i) : pad(cells.get(i), widths[i])).append(last ? "" : "  ");
        }
        return sb.toString();
    }

    private static String pad(String s, int width) {
        return s.length() >= width ? s : s + " ".repeat(width - s.length());
    }
}
