package io.csi4j.driver.replication;

import java.util.Objects;

/**
 * One node's durable view of one replicated volume: the highest epoch it knows, its role at that epoch, and the
 * point (an internal snapshot's name) its copy holds, empty before the first; and, for a primary that handed over, the
 * node it handed over to at that epoch (empty otherwise), so a second handoff to the same epoch cannot name another
 * node; for a copy promoted by a failover, what the volume condition says of it (empty otherwise); and, for a copy
 * promoted by a handoff past silent nodes a failover had replaced, those nodes ({@code replaced}, joined by ", ": a
 * failover at or below this epoch gave up on them and they held nothing at or above it when it was made; carried from the old primary's
 * note so the next handoff may pass them too, {@link HandoffPastSilence}; empty otherwise). At most one
 * node is {@code PRIMARY}
 * at any epoch, and a copy serves writes only as the primary of the highest epoch it knows (docs/design.md,
 * "Replicated volumes").
 */
public record ReplicaState(long epoch, Role role, String point, String successor, String failover, String replaced) {
    public enum Role {
        /** Serves the volume, writable; cuts points for the secondaries. */
        PRIMARY,
        /** Holds the latest complete point it pulled; never writable. */
        SECONDARY,
        /** Learnt that a higher epoch exists while not its secondary: refuses writable use until resynced. */
        FENCED
    }

    public ReplicaState {
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(point, "point");
        Objects.requireNonNull(successor, "successor");
        Objects.requireNonNull(failover, "failover");
        Objects.requireNonNull(replaced, "replaced");
        if (epoch < 1) throw new IllegalArgumentException("epochs start at 1: " + epoch);
    }

    public ReplicaState(long epoch, Role role, String point, String successor, String failover) {
        this(epoch, role, point, successor, failover, "");
    }

    public ReplicaState(long epoch, Role role, String point, String successor) {
        this(epoch, role, point, successor, "");
    }

    public ReplicaState(long epoch, Role role, String point) {
        this(epoch, role, point, "");
    }

    public boolean writable() {
        return role == Role.PRIMARY;
    }

    public ReplicaState holding(String newPoint) {
        return new ReplicaState(epoch, role, newPoint, successor, failover, replaced);
    }
}
