package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Two snapshots of one name and source on two nodes of a replicated volume (docs/replication.md, "Snapshots"): a
 * CreateSnapshot retried while the node holding the name was silent is cut again on the primary, since a degraded
 * volume keeps taking snapshots. A CO retries CreateSnapshot only while it has recorded no answer (the
 * external-snapshotter keeps the snapshot_id of the first successful answer, and csi4j's snapshots are ready at it), so
 * of several snapshots of one name and source the one answered last (its creation, or a retry answered with it; each
 * node keeps that time durably before it answers) is the one the CO holds or will hold: the {@link #NEWEST newest}.
 * Creation time alone would not do: a retry answered with the older one while the newer one's node was silent is
 * what the CO records then.
 * <ul>
 *   <li>CreateSnapshot answers the newest of those its answering nodes hold ({@link #answer});</li>
 *   <li>the sweep deletes the older ones once every node of the source answered in one tick ({@link #older}): never
 *       for names of different sources, never while a node of the source is silent (it may hold a newer one).</li>
 * </ul>
 * The times come from the nodes' clocks: the rule assumes they agree far better than the seconds between a
 * CreateSnapshot and its retry. Pure: no state, no calls.
 */
final class SnapshotDuplicates {
    private SnapshotDuplicates() {}

    /** One named snapshot as a node listed it, with when that node last answered a CreateSnapshot with it. */
    record Held(String nodeId, String name, String snapshotId, String sourceVolumeId, Instant answeredAt) {}

    /** Older first; equal times by snapshot id, so every tick and every retry picks the same one. */
    static final Comparator<Held> NEWEST = Comparator.comparing(Held::answeredAt).thenComparing(Held::snapshotId);

    /** Delete {@code older} on its node; {@code kept} is the newest of its name, which stays. */
    record Deletion(Held older, Held kept) {}

    /**
     * Which of the snapshots of one name the answering nodes hold answers CreateSnapshot of {@code sourceVolumeId}: one
     * of another source if any (its node answers ALREADY_EXISTS), else the newest; empty when no node holds the name.
     */
    static Optional<Held> answer(String sourceVolumeId, List<Held> holders) {
        var other = holders.stream().filter(h -> !h.sourceVolumeId().equals(sourceVolumeId)).min(NEWEST);
        return other.isPresent() ? other : holders.stream().max(NEWEST);
    }

    /**
     * The older snapshots of each name that more than one node holds, all of one replicated source every node of which
     * is in {@code answered} (the nodes whose listing is {@code listed}, taken in one tick).
     */
    static List<Deletion> older(Set<String> answered, Collection<Held> listed) {
        Map<String, List<Held>> byName = new TreeMap<>();
        for (Held h : listed) byName.computeIfAbsent(h.name(), k -> new ArrayList<>()).add(h);
        List<Deletion> deletions = new ArrayList<>();
        byName.forEach((name, held) -> {
            if (held.size() < 2) return;
            String source = held.getFirst().sourceVolumeId();
            if (held.stream().anyMatch(h -> !h.sourceVolumeId().equals(source))) return;   // not ours to judge
            var id = ReplicatedVolumeId.parse(source);
            if (id.isEmpty()) return;
            long seen = answered.stream().filter(id.get()::heldBy).count();
            if (seen != id.get().replicas()) return;                                         // a silent node may hold a newer one
            if (held.stream().anyMatch(h -> !answered.contains(h.nodeId()) || !id.get().heldBy(h.nodeId()))) return;
            Held kept = held.stream().max(NEWEST).orElseThrow();
            held.stream().filter(h -> h != kept).sorted(NEWEST).forEach(h -> deletions.add(new Deletion(h, kept)));
        });
        return deletions;
    }
}
