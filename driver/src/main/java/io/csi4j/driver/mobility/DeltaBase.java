package io.csi4j.driver.mobility;

import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Which base a copy is sent against, of those the receiver offers (the replicas it holds). A delta is only ever
 * computed against content the receiver holds under the same id: a snapshot id names one immutable content on every
 * node (ids are random and name the node that cut it; a replica is a checked copy of it), so an id both sides hold is
 * the same bytes on both. Never a guess: an id not offered, or of another volume, is not a base.
 * <p>For a replica this needs its file to be its point's bytes whenever its name exists (docs/replication.md, "What
 * rounds rely on"): it is named only complete and synced, and nothing writes it (a secondary's image sharing its inode
 * is made a file of its own before anything writes the image, every stage included). The receiver offers every
 * replica it holds by id ({@code VolumeImports.pullPoint}) and hashes the newest ({@code NewestReplica}) on that rule.
 */
public final class DeltaBase {
    private DeltaBase() {}

    /** The base: one of this node's snapshots, or one of its replicas (a copy of another node's snapshot). */
    public sealed interface Base {
        String id();
    }

    public record OfSnapshot(String id) implements Base {}

    /** A replica this node keeps of a snapshot of its own volume that another node cut (a handoff's final point). */
    public record OfReplica(String id) implements Base {}

    /** A ready snapshot of the source's volume on this node, and when it was cut. */
    public record Snapshot(String id, Instant createdAt) {}

    /**
     * The target itself when offered (nothing to send); else the newest offered snapshot of the volume here; else an
     * offered id this node keeps a replica of, of the same volume; else none (a full copy).
     */
    public static Optional<Base> choose(String target, Collection<String> offered, List<Snapshot> snapshotsHere,
                                        Collection<String> replicasHere) {
        if (offered.contains(target)) return Optional.of(new OfSnapshot(target));
        Optional<Base> snapshot = snapshotsHere.stream().filter(s -> offered.contains(s.id()))
                .max(Comparator.comparing(Snapshot::createdAt)).map(s -> new OfSnapshot(s.id()));
        if (snapshot.isPresent()) return snapshot;
        return offered.stream().filter(replicasHere::contains).sorted().findFirst().map(OfReplica::new);
    }
}
