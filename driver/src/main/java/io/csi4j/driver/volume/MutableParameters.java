package io.csi4j.driver.volume;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.PoolStorage;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The keys ControllerModifyVolume (and CreateVolume's mutable_parameters) accept; values checked by the engine. */
public final class MutableParameters {
    public static final String READ_AHEAD_KIB = "readAheadKiB";
    public static final String COMPRESSION = "compression";
    public static final Set<String> KNOWN = Set.of(READ_AHEAD_KIB, COMPRESSION);

    private MutableParameters() {}

    /** The keys and values any engine may take; what this engine takes on its pool is {@link PoolStorage#checkMutableParameters}. */
    public static void validate(Map<String, String> parameters) {
        var unknown = new TreeSet<>(parameters.keySet());
        unknown.removeAll(KNOWN);
        if (!unknown.isEmpty()) {
            throw DomainException.invalid("unsupported mutable parameters " + unknown + "; supported: "
                    + new TreeSet<>(KNOWN));
        }
        String readAhead = parameters.get(READ_AHEAD_KIB);
        if (readAhead != null) readAheadKiB(readAhead);
    }

    /** The engine owns the limits (INVALID, which the service answers INVALID_ARGUMENT). */
    public static long readAheadKiB(String value) {
        return io.csi4j.driver.engine.MutableParameters.readAhead(value);
    }
}
