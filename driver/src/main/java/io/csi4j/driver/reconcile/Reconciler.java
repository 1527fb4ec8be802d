package io.csi4j.driver.reconcile;

import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.GroupSnapshotRecord;
import io.csi4j.driver.catalog.SnapshotRecord;
import io.csi4j.driver.catalog.State;
import io.csi4j.driver.catalog.VolumeGroupRecord;
import io.csi4j.driver.catalog.VolumeRecord;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.StorageEngine;
import io.csi4j.driver.snapshot.GroupSnapshots;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.volume.Volumes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Runs before the plugin reports ready. Every row left in an intermediate state by a crash is
 * finished (DELETING: the caller asked, so the delete completes) or rolled back (CREATING: the
 * caller never got an answer and will retry by name); a volume whose artifact grew without the
 * catalog hearing of it (an expansion cut short) takes the artifact's size. Then artifacts no row
 * owns are reported, and removed when asked. Afterwards no row is CREATING or DELETING and nothing
 * is half-made.
 */
public final class Reconciler {
    private final Catalog catalog;
    private final StorageEngine engine;
    private final Volumes volumes;
    private final Snapshots snapshots;
    private final GroupSnapshots groupSnapshots;

    public record Report(List<String> rolledBack, List<String> finished, Set<String> orphanVolumes,
                         Set<String> orphanSnapshots, List<Path> removedTemporary, boolean orphansRemoved) {
        public boolean clean() {
            return orphanVolumes.isEmpty() && orphanSnapshots.isEmpty();
        }

        public String summary() {
            return "reconciled: %d rolled back, %d finished, %d temporary removed, %d orphan volumes, %d orphan snapshots%s"
                    .formatted(rolledBack.size(), finished.size(), removedTemporary.size(), orphanVolumes.size(),
                            orphanSnapshots.size(), orphansRemoved && !clean() ? " (removed)" : "");
        }
    }

    public Reconciler(Catalog catalog, StorageEngine engine, Volumes volumes, Snapshots snapshots, GroupSnapshots groupSnapshots) {
        this.catalog = catalog;
        this.engine = engine;
        this.volumes = volumes;
        this.snapshots = snapshots;
        this.groupSnapshots = groupSnapshots;
    }

    public Report run(boolean removeOrphans) {
        var rolledBack = new ArrayList<String>();
        var finished = new ArrayList<String>();

        for (GroupSnapshotRecord g : catalog.groupSnapshots().inState(State.CREATING)) {
            groupSnapshots.finishDelete(g.id());
            rolledBack.add(g.id());
        }
        for (GroupSnapshotRecord g : catalog.groupSnapshots().inState(State.DELETING)) {
            groupSnapshots.finishDelete(g.id());
            finished.add(g.id());
        }
        for (SnapshotRecord s : catalog.snapshots().inState(State.CREATING)) {
            snapshots.finishDelete(s.id());
            rolledBack.add(s.id());
        }
        for (SnapshotRecord s : catalog.snapshots().inState(State.DELETING)) {
            snapshots.finishDelete(s.id());
            finished.add(s.id());
        }
        for (VolumeGroupRecord g : catalog.volumeGroups().inState(State.CREATING)) {
            dropGroup(g.id());
            rolledBack.add(g.id());
        }
        for (VolumeRecord v : catalog.volumes().inState(State.CREATING)) {
            volumes.finishDelete(v.id());
            rolledBack.add(v.id());
        }
        for (VolumeRecord v : catalog.volumes().inState(State.DELETING)) {
            volumes.finishDelete(v.id());
            finished.add(v.id());
        }
        // A volume group whose delete was cut short: its member volumes (if the policy deletes them)
        // were marked DELETING in the same transaction and are finished above.
        for (VolumeGroupRecord g : catalog.volumeGroups().inState(State.DELETING)) {
            dropGroup(g.id());
            finished.add(g.id());
        }

        // An expansion cut short after the artifact grew but before the catalog recorded it: the
        // storage took effect, so the row takes the artifact's size (the CO's retry then converges).
        for (VolumeRecord v : catalog.volumes().inState(State.READY)) {
            engine.artifact(Artifact.Kind.VOLUME, v.id()).filter(a -> a.sizeBytes() > v.capacityBytes()).ifPresent(a -> {
                catalog.volumes().setCapacity(v.id(), a.sizeBytes());
                finished.add(v.id());
            });
        }

        List<Path> temporary = engine.removeTemporaryArtifacts();
        Set<String> orphanVolumes = new TreeSet<>(engine.volumeArtifacts());
        orphanVolumes.removeIf(id -> catalog.volumes().byId(id).isPresent());
        Set<String> orphanSnapshots = new TreeSet<>(engine.snapshotArtifacts());
        orphanSnapshots.removeIf(id -> catalog.snapshots().byId(id).isPresent());
        if (removeOrphans) {
            orphanVolumes.forEach(engine::deleteVolume);
            orphanSnapshots.forEach(engine::deleteSnapshot);
        }
        return new Report(rolledBack, finished, orphanVolumes, orphanSnapshots, temporary, removeOrphans);
    }

    private void dropGroup(String groupId) {
        catalog.inTransaction(tx -> {
            tx.volumeGroups().members(groupId).forEach(v -> tx.volumeGroups().removeMember(groupId, v));
            tx.volumeGroups().delete(groupId);
            return null;
        });
    }
}
