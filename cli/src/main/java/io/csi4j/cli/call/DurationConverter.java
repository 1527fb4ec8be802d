package io.csi4j.cli.call;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Durations as people write them: {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, a bare number of seconds, or ISO {@code PT30S}. */
public final class DurationConverter implements ITypeConverter<Duration> {
    private static final Pattern SHAPE = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)?");

    public static Duration parse(String text) {
        String s = text.trim();
        var m = SHAPE.matcher(s);
        if (m.matches()) {
            double n = Double.parseDouble(m.group(1));
            String unit = m.group(2) == null ? "s" : m.group(2);
            double millis = switch (unit) {
                case "ms" -> n;
                case "s" -> n * 1e3;
                case "m" -> n * 60e3;
                default -> n * 3600e3;
            };
            return Duration.ofMillis(Math.round(millis));
        }
        try {
            return Duration.parse(s);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("not a duration: '" + text + "' (examples: 500ms, 30s, 2m, 1h)");
        }
    }

    /** The way {@link #parse} reads it back, in the largest whole unit: {@code 30s}, {@code 1500ms}, {@code 2m}. */
    public static String format(Duration d) {
        long millis = d.toMillis();
        if (millis % 3_600_000 == 0 && millis > 0) return millis / 3_600_000 + "h";
        if (millis % 60_000 == 0 && millis > 0) return millis / 60_000 + "m";
        if (millis % 1000 == 0) return millis / 1000 + "s";
        return millis + "ms";
    }

    @Override
    public Duration convert(String value) {
        try {
            Duration d = parse(value);
            if (d.isNegative() || d.isZero()) throw new IllegalArgumentException("duration must be positive: '" + value + "'");
            return d;
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
