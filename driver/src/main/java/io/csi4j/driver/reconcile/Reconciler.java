package io.csi4j.driver.reconcile;

import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.GroupSnapshotRecord;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeGroupRecord;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.snapshot.GroupSnapshots;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.volume.VolumeShape;
import io.csi4j.driver.volume.Volumes;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Runs before the plugin reports ready. Every row left in an intermediate state by a crash is
 * finished (DELETING: the caller asked, so the delete completes) or rolled back (CREATING: the
 * caller never got an answer and will retry by name); a volume whose artifact grew without the
 * catalog hearing of it (an expansion cut short) takes the artifact's size; a blank volume whose
 * image a power cut lost (it is made without a sync) is re-made from its row. Then the files of deleted
 * volumes that their tombstones name are removed, and so are artifacts no row owns that hold nothing
 * (a blank create cut short before its commit); other artifacts no row owns are reported, and removed
 * when asked. Afterwards no row is CREATING or DELETING, every row has its artifact and nothing is half-made.
 */
public final class Reconciler {
    private final Catalog catalog;
    private final PoolStorage engine;
    private final Volumes volumes;
    private final Snapshots snapshots;
    private final GroupSnapshots groupSnapshots;

    /**
     * @param remade blank volumes whose image was re-made from the row
     * @param swept  artifacts removed without asking: named by a tombstone, or holding nothing and owned by no row
     */
    public record Report(List<String> rolledBack, List<String> finished, Set<String> orphanVolumes,
                         Set<String> orphanSnapshots, List<Path> removedTemporary, boolean orphansRemoved,
                         List<String> remade, Set<String> swept) {
        public boolean clean() {
            return orphanVolumes.isEmpty() && orphanSnapshots.isEmpty();
        }

        public String summary() {
            return ("reconciled: %d rolled back, %d finished, %d re-made, %d temporary removed, %d swept, %d orphan volumes,"
                    + " %d orphan snapshots%s").formatted(rolledBack.size(), finished.size(), remade.size(),
                            removedTemporary.size(), swept.size(), orphanVolumes.size(), orphanSnapshots.size(),
                            orphansRemoved && !clean() ? " (removed)" : "");
        }
    }

    public Reconciler(Catalog catalog, PoolStorage engine, Volumes volumes, Snapshots snapshots, GroupSnapshots groupSnapshots) {
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
            volumes.deletion().finishDelete(v.id());
            rolledBack.add(v.id());
        }
        for (VolumeRecord v : catalog.volumes().inState(State.DELETING)) {
            volumes.deletion().finishDelete(v.id());
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
        // A blank volume is made without a sync: if a power cut lost its image, it is made again from the row.
        var remade = new ArrayList<String>();
        for (VolumeRecord v : catalog.volumes().inState(State.READY)) {
            Optional<Artifact> artifact = readable(v.id());
            boolean lost = artifact.isEmpty() || artifact.get().sizeBytes() < v.capacityBytes();
            if (lost && v.source() instanceof ContentSource.None) {
                if (engine.ensureBlankVolume(v.id(), v.capacityBytes(), VolumeShape.accessOf(v), new Artifact.Label(v.name(), ""))) {
                    remade.add(v.id());
                }
                continue;
            }
            artifact.filter(a -> a.sizeBytes() > v.capacityBytes()).ifPresent(a -> {
                catalog.volumes().setCapacity(v.id(), a.sizeBytes());
                finished.add(v.id());
            });
        }

        List<Path> temporary = engine.removeTemporaryArtifacts();
        Set<String> swept = sweepTombstones();
        Set<String> orphanVolumes = new TreeSet<>(engine.volumeArtifacts());
        orphanVolumes.removeIf(id -> catalog.volumes().byId(id).isPresent());
        Set<String> orphanSnapshots = new TreeSet<>(engine.snapshotArtifacts());
        orphanSnapshots.removeIf(id -> catalog.snapshots().byId(id).isPresent());
        for (String id : List.copyOf(orphanVolumes)) {
            // a blank create cut short before its commit: nothing was ever written into it, nothing to lose
            if (!engine.holdsData(Artifact.Kind.VOLUME, id)) {
                engine.deleteVolume(id);
                orphanVolumes.remove(id);
                swept.add(id);
            }
        }
        if (removeOrphans) {
            orphanVolumes.forEach(engine::deleteVolume);
            orphanSnapshots.forEach(engine::deleteSnapshot);
        }
        engine.syncDeletes();
        return new Report(rolledBack, finished, orphanVolumes, orphanSnapshots, temporary, removeOrphans, remade, swept);
    }

    /** The sidecar of a volume's artifact, or empty when the artifact is missing or its sidecar unreadable. */
    private Optional<Artifact> readable(String volumeId) {
        try {
            return engine.artifact(Artifact.Kind.VOLUME, volumeId);
        } catch (RuntimeException unreadable) {
            return Optional.empty();
        }
    }

    /**
     * Removes the files of deleted volumes that a crash (or a power cut) left behind, as their tombstones
     * say, then drops the tombstones once the removals are synced.
     */
    private Set<String> sweepTombstones() {
        Set<String> swept = new TreeSet<>();
        List<String> done = new ArrayList<>();
        List<String> tombstones = catalog.tombstones().volumeIds();
        if (tombstones.isEmpty()) return swept;
        Set<String> present = engine.volumeArtifacts();
        for (String id : tombstones) {
            if (catalog.volumes().byId(id).isEmpty()) {
                if (present.contains(id)) swept.add(id);
                engine.deleteVolume(id);
            }
            done.add(id);
        }
        engine.syncDeletes();
        catalog.tombstones().remove(done);
        return swept;
    }

    private void dropGroup(String groupId) {
        catalog.inTransaction(tx -> {
            tx.volumeGroups().members(groupId).forEach(v -> tx.volumeGroups().removeMember(groupId, v));
            tx.volumeGroups().delete(groupId);
            return null;
        });
    }
}
