package io.csi4j.driver.snapshot;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.CatalogTables;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.FreezeHold;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.model.GroupSnapshotRecord;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.volume.Lifecycle;
import io.csi4j.driver.volume.Lookup;
import io.csi4j.driver.volume.Volumes;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Group snapshots: one member snapshot per source volume, cut write-order consistent by the engine
 * (freeze all, cut all, thaw all). The group row and its members share one intent and one commit.
 */
public final class GroupSnapshots {
    private final Catalog catalog;
    private final PoolStorage engine;
    private final Volumes volumes;
    private final DriverConfig config;
    private final InstantSource clock;
    private final Lookup<GroupSnapshotRecord> lookup;
    private final SnapshotSources snapshotSources;

    /** A group snapshot with its member snapshots, in source order. */
    public record GroupSnapshot(GroupSnapshotRecord group, List<SnapshotRecord> members) {}

    public GroupSnapshots(Catalog catalog, PoolStorage engine, Volumes volumes, DriverConfig config, InstantSource clock) {
        this(catalog, engine, volumes, config, clock, SnapshotSources.ANY);
    }

    /** {@code sources}: which members may be cut here now (a replicated volume's copy only where it is the primary). */
    public GroupSnapshots(Catalog catalog, PoolStorage engine, Volumes volumes, DriverConfig config, InstantSource clock,
            SnapshotSources sources) {
        this.snapshotSources = sources;
        this.catalog = catalog;
        this.engine = engine;
        this.volumes = volumes;
        this.config = config;
        this.clock = clock;
        this.lookup = Lookup.groupSnapshots(catalog, config.nodeId());
    }

    public GroupSnapshot create(String name, List<String> sourceVolumeIds, Map<String, String> parameters) {
        if (!parameters.isEmpty()) {
            throw DomainException.invalid("unknown group snapshot parameters " + parameters.keySet() + "; this driver takes none");
        }
        return create(name, sourceVolumeIds, ObjectId.generate(Kind.GROUP_SNAPSHOT, config.nodeId()), null);
    }

    /**
     * This node's part of a group snapshot that spans nodes: its members here, cut under {@code held} (frozen
     * with every other node's members by the cluster controller), under the cluster-wide id every part shares.
     */
    public GroupSnapshot createPart(String name, ObjectId clusterId, List<String> localVolumeIds, FreezeHold held) {
        if (!clusterId.clusterWide()) throw DomainException.invalid("group snapshot id " + clusterId + " is not a cluster-wide id");
        return create(name, localVolumeIds, clusterId, held);
    }

    private GroupSnapshot create(String name, List<String> sourceVolumeIds, ObjectId id, FreezeHold held) {
        if (sourceVolumeIds.isEmpty()) throw DomainException.invalid("source_volume_ids is REQUIRED");
        Set<String> sources = new HashSet<>(sourceVolumeIds);
        if (sources.size() != sourceVolumeIds.size()) throw DomainException.invalid("source_volume_ids has duplicates");

        Optional<GroupSnapshotRecord> existing = catalog.groupSnapshots().byName(name);
        if (existing.isPresent()) {
            GroupSnapshotRecord g = existing.get();
            if (!new HashSet<>(g.sourceVolumeIds()).equals(sources) || !g.id().equals(id.toString()) && id.clusterWide()) {
                throw DomainException.exists("group snapshot '" + name + "' already exists (" + g.id()
                        + ") for source volumes " + g.sourceVolumeIds());
            }
            if (g.state() != State.READY) throw DomainException.aborted("group snapshot '" + name + "' is being " + Snapshots.verb(g.state()));
            return withMembers(g);
        }
        for (String volumeId : sourceVolumeIds) {
            snapshotSources.checkSnapshotSource(volumeId);   // never a member cut from a copy that is not the primary
            volumes.reads().readyVolume(volumeId, "source volume");
        }

        var now = clock.instant();
        var group = new GroupSnapshotRecord(id.toString(), name,
                sourceVolumeIds, Map.of(), State.CREATING, now, now);
        Map<String, String> snapshotToVolume = new LinkedHashMap<>();
        for (String volumeId : sourceVolumeIds) {
            snapshotToVolume.put(ObjectId.generate(Kind.SNAPSHOT, config.nodeId()).toString(), volumeId);
        }
        catalog.inTransaction(tx -> {                                                    // intent
            tx.groupSnapshots().insert(group);
            snapshotToVolume.forEach((snapshotId, volumeId) -> tx.snapshots().insert(new SnapshotRecord(
                    snapshotId, null, volumeId, 0, group.id(), Map.of(), State.CREATING, now, now)));
            return null;
        });
        return Lifecycle.effectThenCommit(
                () -> engine.createGroupSnapshot(snapshotToVolume, new Artifact.Label(name, group.id()), held),  // labelled for fsck --rebuild
                () -> {
                    snapshotToVolume.keySet().forEach(engine::deleteSnapshot);  // made before a later step failed
                    removeRows(group.id(), snapshotToVolume.keySet());
                },
                // the answer is read in the commit: a DeleteGroupSnapshot right after it must not turn this one into an error
                sizes -> catalog.inTransaction(tx -> {
                    sizes.forEach((snapshotId, size) -> tx.snapshots().setSize(snapshotId, size));
                    for (String snapshotId : snapshotToVolume.keySet()) tx.snapshots().setState(snapshotId, State.CREATING, State.READY);
                    if (!tx.groupSnapshots().setState(group.id(), State.CREATING, State.READY)) {
                        throw DomainException.aborted("group snapshot " + group.id() + " changed state while being created");
                    }
                    return withMembers(tx, tx.groupSnapshots().byId(group.id()).orElseThrow());
                }));
    }

    public void delete(String groupSnapshotId, List<String> snapshotIds) {
        Optional<GroupSnapshotRecord> found = lookup.toDelete(groupSnapshotId);
        if (found.isEmpty()) return;
        GroupSnapshotRecord g = found.get();
        List<SnapshotRecord> members = catalog.snapshots().ofGroup(g.id());
        checkSnapshotList(g, members, snapshotIds);
        if (g.state() == State.CREATING) throw DomainException.aborted("group snapshot " + g.id() + " is being created");
        if (g.state() == State.READY) {
            catalog.inTransaction(tx -> {                                                // intent
                tx.groupSnapshots().setState(g.id(), State.READY, State.DELETING);
                members.forEach(m -> tx.snapshots().setState(m.id(), State.READY, State.DELETING));
                return null;
            });
        }
        finishDelete(g.id());
    }

    /** Effect and commit of a group delete (or of a rolled-back create); the reconciler uses it too. */
    public void finishDelete(String groupSnapshotId) {
        List<String> memberIds = catalog.snapshots().ofGroup(groupSnapshotId).stream().map(SnapshotRecord::id).toList();
        removeRows(groupSnapshotId, memberIds);
    }

    private void removeRows(String groupSnapshotId, Collection<String> memberIds) {
        for (String snapshotId : memberIds) engine.deleteSnapshot(snapshotId);           // effect
        catalog.inTransaction(tx -> {                                                    // commit
            memberIds.forEach(tx.snapshots()::delete);
            tx.groupSnapshots().delete(groupSnapshotId);
            return null;
        });
    }

    public GroupSnapshot get(String groupSnapshotId, List<String> snapshotIds) {
        GroupSnapshotRecord g = lookup.ready(groupSnapshotId);
        GroupSnapshot result = withMembers(g);
        checkSnapshotList(g, result.members(), snapshotIds);
        return result;
    }

    /** The group snapshot of this name in any state, if there is one. */
    public Optional<GroupSnapshotRecord> byName(String name) {
        return catalog.groupSnapshots().byName(name);
    }

    private GroupSnapshot withMembers(GroupSnapshotRecord g) {
        return withMembers(catalog, g);
    }

    private static GroupSnapshot withMembers(CatalogTables tables, GroupSnapshotRecord g) {
        var byVolume = new LinkedHashMap<String, SnapshotRecord>();
        for (SnapshotRecord s : tables.snapshots().ofGroup(g.id())) byVolume.put(s.sourceVolumeId(), s);
        var ordered = new ArrayList<SnapshotRecord>();
        for (String volumeId : g.sourceVolumeIds()) {
            SnapshotRecord s = byVolume.get(volumeId);
            if (s != null) ordered.add(s);
        }
        return new GroupSnapshot(g, ordered);
    }

    /** Spec: a snapshot_ids list that is given must be exactly the group's members (INVALID_ARGUMENT otherwise). */
    private static void checkSnapshotList(GroupSnapshotRecord g, List<SnapshotRecord> members, List<String> snapshotIds) {
        if (snapshotIds.isEmpty()) return;
        Set<String> actual = new HashSet<>();
        members.forEach(m -> actual.add(m.id()));
        if (!actual.equals(new HashSet<>(snapshotIds))) {
            throw DomainException.invalid("snapshot_ids " + snapshotIds + " do not match the members of group snapshot "
                    + g.id() + ": " + actual);
        }
    }
}
