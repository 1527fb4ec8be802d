package io.csi4j.driver.storage;

import java.util.Locale;

/** Byte counts as people read them in messages: binary units, one decimal ("1.5 GiB", "300 MiB", "512 B"). */
public final class ByteUnits {
    private ByteUnits() {}

    private static final String[] UNITS = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

    public static String human(long bytes) {
        if (bytes < 0) return "-" + human(bytes == Long.MIN_VALUE ? Long.MAX_VALUE : -bytes);
        int unit = 0;
        double value = bytes;
        while (value >= 1024 && unit < UNITS.length - 1) {
            value /= 1024;
            unit++;
        }
        if (unit == 0) return bytes + " B";
        String number = value >= 100 || value == Math.rint(value)
                ? String.format(Locale.ROOT, "%.0f", value) : String.format(Locale.ROOT, "%.1f", value);
        return number + " " + UNITS[unit];
    }
}
