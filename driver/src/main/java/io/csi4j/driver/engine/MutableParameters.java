package io.csi4j.driver.engine;

import io.csi4j.driver.os.Tools;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The mutable parameters of ControllerModifyVolume, validated all at once so that nothing is
 * applied unless everything is valid: {@code readAheadKiB} (0..65536) and {@code compression}
 * (zstd, lzo, zlib or none).
 */
public record MutableParameters(Optional<Long> readAheadKiB, Optional<String> compression) {

    /** The largest read-ahead a volume may ask for, in KiB (the kernel takes more; nothing gains from it). */
    public static final long MAX_READ_AHEAD_KIB = 65536;

    static final Set<String> COMPRESSION = Set.of("zstd", "lzo", "zlib", "none");

    /** INVALID naming every unknown key (and the known ones) or bad value. */
    static MutableParameters parse(Map<String, String> parameters, Set<String> known) {
        Set<String> unknown = new TreeSet<>(parameters.keySet());
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            throw StorageException.invalid("unknown mutable parameter(s) " + unknown + "; this engine knows " + new TreeSet<>(known));
        }
        Optional<Long> readAhead = Optional.ofNullable(parameters.get("readAheadKiB")).map(MutableParameters::readAhead);
        Optional<String> compression = Optional.ofNullable(parameters.get("compression")).map(c -> {
            if (!COMPRESSION.contains(c)) {
                throw StorageException.invalid("compression \"" + c + "\" is not one of " + new TreeSet<>(COMPRESSION));
            }
            return c;
        });
        return new MutableParameters(readAhead, compression);
    }

    /** A read-ahead already parsed (a stage's): 0..{@link #MAX_READ_AHEAD_KIB}; INVALID otherwise. */
    public static long checkReadAhead(long kib) {
        if (kib < 0 || kib > MAX_READ_AHEAD_KIB) {
            throw StorageException.invalid("readAheadKiB must be 0.." + MAX_READ_AHEAD_KIB + ", not " + kib);
        }
        return kib;
    }

    /** A readAheadKiB value: an integer 0..{@link #MAX_READ_AHEAD_KIB}; INVALID otherwise. */
    public static long readAhead(String value) {
        try {
            long kib = Long.parseLong(value.strip());
            if (kib >= 0 && kib <= MAX_READ_AHEAD_KIB) return kib;
        } catch (NumberFormatException e) {
            // reported below
        }
        throw StorageException.invalid("readAheadKiB must be an integer 0.." + MAX_READ_AHEAD_KIB + ", not \"" + value + "\"");
    }

    /** New writes to {@code path} (a file, or everything created in a directory) are compressed so. */
    public static void setBtrfsCompression(Path path, String compression) {
        Tools.run(Tools.DEFAULT_TIMEOUT, "btrfs", List.of("property", "set", path.toString(), "compression", compression));
    }
}
