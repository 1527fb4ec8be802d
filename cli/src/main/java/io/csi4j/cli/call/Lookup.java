package io.csi4j.cli.call;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.function.BooleanSupplier;

/**
 * Whether an object existed just before the CLI deleted it. A delete of a missing object answers OK by the spec, so
 * the answer cannot tell "deleted" from "there was nothing": the CLI looks first (ControllerGetVolume for a volume,
 * ListSnapshots by id for a snapshot) and still sends the delete, which finishes whatever a plugin had half done. A
 * plugin that does not offer the lookup (UNIMPLEMENTED, or any other error) leaves the answer {@link #UNKNOWN}, and the
 * CLI says what the delete said.
 */
enum Lookup {
    FOUND, MISSING, UNKNOWN;

    /** Runs {@code exists}; NOT_FOUND counts as missing. */
    static Lookup of(BooleanSupplier exists) {
        try {
            return exists.getAsBoolean() ? FOUND : MISSING;
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode() == Status.Code.NOT_FOUND ? MISSING : UNKNOWN;
        }
    }

    /** The line a delete of {@code what} ("volume ID") prints. */
    String deleted(String what) {
        return this == MISSING ? what + " not found (nothing to delete)" : "deleted " + what;
    }
}
