package io.csi4j.cli;

import java.util.Locale;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Human byte sizes as Kubernetes writes them: {@code 512}, {@code 10Gi}, {@code 1.5G}, {@code 64Mi}. */
public final class ByteSize implements ITypeConverter<Long> {
    private static final Pattern SHAPE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([kKMGTPE]i?|)[bB]?");

    public static long parse(String text) {
        var m = SHAPE.matcher(text.trim());
        if (!m.matches()) throw new IllegalArgumentException("not a size: '" + text + "' (examples: 512, 64Mi, 10Gi, 1G)");
        double number = Double.parseDouble(m.group(1));
        String unit = m.group(2);
        double multiplier = switch (unit.toUpperCase(Locale.ROOT)) {
            case "" -> 1;
            case "K" -> 1e3; case "KI" -> 1L << 10;
            case "M" -> 1e6; case "MI" -> 1L << 20;
            case "G" -> 1e9; case "GI" -> 1L << 30;
            case "T" -> 1e12; case "TI" -> 1L << 40;
            case "P" -> 1e15; case "PI" -> 1L << 50;
            case "E" -> 1e18; case "EI" -> 1L << 60;
            default -> throw new IllegalArgumentException("unknown unit in '" + text + "'");
        };
        double bytes = number * multiplier;
        if (bytes > Long.MAX_VALUE) throw new IllegalArgumentException("size too large: " + text);
        return (long) Math.ceil(bytes);
    }

    public static String format(long bytes) {
        String[] units = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        int unit = 0;
        double value = bytes;
        while (value >= 1024 && unit < units.length - 1 && (long) value % 1024 == 0) {
            value /= 1024;
            unit++;
        }
        return (long) value + units[unit];
    }

    @Override
    public Long convert(String value) {
        try {
            return parse(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
