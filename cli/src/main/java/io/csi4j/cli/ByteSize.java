package io.csi4j.cli;

import io.csi4j.driver.storage.ByteCount;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Human byte sizes as Kubernetes writes them: {@code 512}, {@code 10Gi}, {@code 1.5G}, {@code 64Mi}. A decimal unit
 * ({@code 1G}, {@code 1GB}: 10^9) is taken as written, with a note on the error stream, since most who write
 * {@code 1GB} for a volume mean 1Gi.
 */
public final class ByteSize implements ITypeConverter<Long> {
    private static final Pattern SHAPE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([kKMGTPE]i?|)[bB]?");

    private final PrintWriter notes;

    /** Notes go to {@code notes} (the command line's error stream); {@code null}: no notes. */
    public ByteSize(PrintWriter notes) {
        this.notes = notes;
    }

    public ByteSize() {
        this(null);
    }

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

    /**
     * The note a size with a decimal unit earns: {@code 1GB means 1000000000 bytes (953.7Mi), a decimal unit; write
     * 1Gi for 1073741824 bytes}. Empty for plain numbers and binary units.
     */
    public static Optional<String> decimalNote(String text) {
        var m = SHAPE.matcher(text.trim());
        if (!m.matches() || m.group(2).isEmpty() || m.group(2).endsWith("i")) return Optional.empty();
        long decimal = parse(text);
        String binary = m.group(1) + m.group(2).toUpperCase(Locale.ROOT) + "i";
        String note = text.trim() + " means " + decimal + " bytes (" + ByteCount.approximate(decimal) + "), a decimal unit";
        try {
            return Optional.of(note + "; write " + binary + " for " + parse(binary) + " bytes");
        } catch (IllegalArgumentException tooLarge) {
            return Optional.of(note);
        }
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
            long bytes = parse(value);
            if (notes != null) decimalNote(value).ifPresent(note -> notes.println("csi4j: note: " + note));
            return bytes;
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
