package io.csi4j.driver.volume;

import io.csi4j.driver.domain.DomainException;

/** CSI's capacity_range: 0 means "not set" for either bound. */
public record CapacityRange(long requiredBytes, long limitBytes) {
    public static final CapacityRange ANY = new CapacityRange(0, 0);
    static final long MIB = 1L << 20;

    public CapacityRange {
        if (requiredBytes < 0 || limitBytes < 0) {
            throw DomainException.invalid("capacity_range: required_bytes and limit_bytes must not be negative");
        }
        if (limitBytes > 0 && requiredBytes > limitBytes) {
            throw DomainException.invalid("capacity_range: required_bytes " + requiredBytes
                    + " exceeds limit_bytes " + limitBytes);
        }
    }

    public boolean admits(long bytes) {
        return bytes >= requiredBytes && (limitBytes == 0 || bytes <= limitBytes);
    }

    /**
     * The size to allocate: at least {@code floor} (a source's size) and the required bytes, or the
     * default when nothing is asked; rounded up to 1 MiB, or to 4 KiB when the limit leaves no room.
     */
    public long resolve(long defaultBytes, long floor) {
        long wanted = Math.max(requiredBytes == 0 && limitBytes == 0 ? defaultBytes : requiredBytes, floor);
        if (requiredBytes == 0 && limitBytes > 0) wanted = Math.max(Math.min(defaultBytes, limitBytes), floor);
        long size = roundUp(wanted, MIB);
        if (limitBytes > 0 && size > limitBytes) size = roundUp(wanted, 4096);
        if (limitBytes > 0 && size > limitBytes) {
            throw DomainException.outOfRange("capacity_range: limit_bytes " + limitBytes + " is below the "
                    + (floor > requiredBytes ? "source's size " + floor : "smallest volume this driver makes (4 KiB granules)"));
        }
        return size;
    }

    static long roundUp(long value, long granule) {
        return Math.max(granule, (value + granule - 1) / granule * granule);
    }
}
