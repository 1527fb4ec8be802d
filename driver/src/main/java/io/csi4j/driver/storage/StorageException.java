package io.csi4j.driver.storage;

import java.util.Objects;

/**
 * A failure of the storage core (catalog, engines, OS bindings) in its own terms: why, not which gRPC code.
 * The CSI layer picks the code from the {@link Reason} in one place ({@code io.csi4j.driver.csi.StorageStatus}).
 * Messages carry ids, paths and the failing call, never parameters or secrets.
 */
public class StorageException extends RuntimeException {

    /** Why storage refused or failed. */
    public enum Reason {
        /** The object (or its source) does not exist. */
        NOT_FOUND,
        /** Another object already has this id or name, or exists with other properties. */
        EXISTS,
        /** The request is malformed: a bad id, size, option or parameter. */
        INVALID,
        /** Well-formed, but this engine or pool cannot do it (block volumes on the dir engine, compression off btrfs). */
        UNSUPPORTED,
        /** A size outside what the object can be (smaller than its content, a volume that cannot shrink). */
        OUT_OF_RANGE,
        /** The pool (or the node) has no room for it. */
        NO_SPACE,
        /** The object's state forbids it until something else is undone: attached, mounted, referenced, not a file. */
        IN_USE,
        /** Another operation holds the object right now; the same call may succeed when retried. */
        BUSY,
        /** A tool or the kernel did not answer in time. */
        TIMED_OUT,
        /** Anything else: an I/O error, a tool that failed, a state storage did not expect. */
        FAILED
    }

    private final Reason reason;

    public StorageException(Reason reason, String message) {
        this(reason, message, null);
    }

    public StorageException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }

    public static StorageException notFound(String message) { return new StorageException(Reason.NOT_FOUND, message); }

    public static StorageException exists(String message) { return new StorageException(Reason.EXISTS, message); }

    public static StorageException invalid(String message) { return new StorageException(Reason.INVALID, message); }

    public static StorageException unsupported(String message) { return new StorageException(Reason.UNSUPPORTED, message); }

    public static StorageException outOfRange(String message) { return new StorageException(Reason.OUT_OF_RANGE, message); }

    public static StorageException noSpace(String message) { return new StorageException(Reason.NO_SPACE, message); }

    public static StorageException inUse(String message) { return new StorageException(Reason.IN_USE, message); }

    public static StorageException busy(String message) { return new StorageException(Reason.BUSY, message); }
}
