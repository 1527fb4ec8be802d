package io.csi4j.driver.volume;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.Preallocation;
import java.util.Map;
import java.util.Optional;

/**
 * How a volume's space is allocated, the StorageClass parameter {@code csi4j.io/provisioning}: {@code thin} (the
 * default: allocated as it is written, overcommitted as the pool allows) or {@code thick} (allocated and written up
 * front, counted against the space really free: the engine's {@link Preallocation}).
 */
public enum Provisioning {
    THIN, THICK;

    public static final String PARAMETER = "csi4j.io/provisioning";

    /** The parameter's value in a create's (or a volume's) parameters; INVALID for anything but thin or thick. */
    public static Provisioning of(Map<String, String> parameters) {
        String value = parameters.get(PARAMETER);
        if (value == null) return THIN;
        return switch (value) {
            case "thin" -> THIN;
            case "thick" -> THICK;
            default -> throw DomainException.invalid("parameter " + PARAMETER + " is '" + value + "'; it is thin (the default) or thick");
        };
    }

    /** The engine's preallocation for a thick volume (INVALID when it has none), empty for a thin one. */
    public static Optional<Preallocation> of(Map<String, String> parameters, PoolStorage engine) {
        if (of(parameters) == THIN) return Optional.empty();
        return Optional.of(engine.capability(Preallocation.class).orElseThrow(() -> DomainException.invalid(
                "parameter " + PARAMETER + " is thick, and the " + engine.name() + " engine makes no thick volumes"
                        + " (its volumes are directories)")));
    }
}
