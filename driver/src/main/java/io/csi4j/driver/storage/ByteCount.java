package io.csi4j.driver.storage;

import java.util.Locale;

/**
 * Byte counts as a person reads them in a message: binary units the way Kubernetes writes them ({@code Gi}), with
 * the exact count beside when the unit is not (a size stays copyable into a request).
 */
public final class ByteCount {
    private static final String[] UNITS = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

    private ByteCount() {}

    /** {@code 512 bytes}, {@code 64Mi (67108864 bytes)}, {@code 75.9Gi (81470160896 bytes)}. */
    public static String describe(long bytes) {
        if (bytes < 1024 && bytes > -1024) return bytes + " bytes";
        return approximate(bytes) + " (" + bytes + " bytes)";
    }

    /** {@code 512}, {@code 64Mi}, {@code 953.7Mi}: the largest binary unit that leaves at least 1, one decimal when not whole. */
    public static String approximate(long bytes) {
        long magnitude = Math.abs(bytes);
        if (magnitude < 1024) return Long.toString(bytes);
        int unit = 0;
        while (unit < UNITS.length - 1 && magnitude >= 1L << (10 * (unit + 2))) unit++;
        long scale = 1L << (10 * (unit + 1));
        if (bytes % scale == 0) return bytes / scale + UNITS[unit];
        return String.format(Locale.ROOT, "%.1f%s", bytes / (double) scale, UNITS[unit]);
    }
}
