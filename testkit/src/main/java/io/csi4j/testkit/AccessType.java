package io.csi4j.testkit;

import java.util.Locale;

/** How the suite asks for its volumes: as a mounted filesystem or as a raw block device. */
public enum AccessType {
    MOUNT, BLOCK;

    public static AccessType parse(String text) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "mount" -> MOUNT;
            case "block" -> BLOCK;
            default -> throw new IllegalArgumentException("access type must be mount or block, not '" + text + "'");
        };
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
