package io.csi4j.driver.domain;

import java.util.Objects;

/**
 * Why the domain ({@code volume/}, {@code snapshot/}, {@code group/}, {@code node/}, {@code mobility/}) refuses or
 * fails a request, in its own terms. Each edge picks the status its callers see from the {@link Kind} in one place
 * ({@code csi/CsiStatus}, {@code addons/AddonsStatus}, {@code cluster/ClusterStatus}); the message goes out as it
 * is, so it names ids, sizes and what to do, never parameters or secrets.
 */
public final class DomainException extends RuntimeException {

    /** What went wrong, as far as the caller can act on it. */
    public enum Kind {
        /** The object (or the source it names) does not exist here. */
        NOT_FOUND,
        /** An object of that name, or that binding, exists already with other properties. */
        EXISTS,
        /** The request is malformed, or asks what this plugin, engine or pool does not do. */
        INVALID,
        /** A size outside what the object can be. */
        OUT_OF_RANGE,
        /** No room: the pool, the node or the group is at its limit, or the topology asked cannot be met here. */
        EXHAUSTED,
        /** Well-formed, but the state of things forbids it until something else is done first (unstage, another node). */
        PRECONDITION,
        /** Stopped by a concurrent change or a broken transfer; the same call may succeed when retried. */
        ABORTED,
        /** Cannot be decided while something outside this node does not answer; the same call may succeed later. */
        UNAVAILABLE,
        /** A rule one side must keep was broken (a peer's stream that makes no sense): a bug, said with its facts. */
        FAILED
    }

    private final Kind kind;

    public DomainException(Kind kind, String message) {
        this(kind, message, null);
    }

    /** No stack trace unless there is a cause: most of these are answers, not bugs. */
    public DomainException(Kind kind, String message, Throwable cause) {
        super(message, cause, false, cause != null);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    public Kind kind() {
        return kind;
    }

    public static DomainException notFound(String message) { return new DomainException(Kind.NOT_FOUND, message); }
    public static DomainException exists(String message) { return new DomainException(Kind.EXISTS, message); }
    public static DomainException invalid(String message) { return new DomainException(Kind.INVALID, message); }
    public static DomainException outOfRange(String message) { return new DomainException(Kind.OUT_OF_RANGE, message); }
    public static DomainException exhausted(String message) { return new DomainException(Kind.EXHAUSTED, message); }
    public static DomainException precondition(String message) { return new DomainException(Kind.PRECONDITION, message); }
    public static DomainException aborted(String message) { return new DomainException(Kind.ABORTED, message); }
    public static DomainException unavailable(String message) { return new DomainException(Kind.UNAVAILABLE, message); }
    public static DomainException failed(String message) { return new DomainException(Kind.FAILED, message); }
}
