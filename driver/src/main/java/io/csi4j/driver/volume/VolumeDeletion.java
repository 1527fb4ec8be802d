package io.csi4j.driver.volume;

import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.CatalogTables;
import io.csi4j.driver.catalog.CatalogTransaction;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.model.PublicationRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeRecord;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * DeleteVolume, and the end of every other volume delete (a create rolled back, DeleteVolumeGroup's members, the
 * reconciler's DELETING rows). A delete is commit, then effect: one transaction deletes the row and records a
 * tombstone (the call's one sync), then the files are unlinked without a sync. A crash in between leaves files the
 * tombstone names; the start-up sweep removes them. Tombstones are dropped in batches, after one sync of the pool's
 * directory made their unlinks durable (docs/design.md, "Crash protocol": a delete commits first because a READY
 * row whose clone or restore is gone could not be re-made).
 */
public final class VolumeDeletion {
    /** How many unlinks share one sync of the pool's directory (and one tombstone clean-up in a delete's commit). */
    static final int TOMBSTONE_BATCH = 256;

    private final Catalog catalog;
    private final PoolStorage engine;
    private final Lookup<VolumeRecord> lookup;
    /** Volumes whose files are unlinked but not yet synced away: their tombstones go after the next directory sync. */
    private final Queue<String> unlinked = new ConcurrentLinkedQueue<>();

    VolumeDeletion(Catalog catalog, PoolStorage engine, String nodeId) {
        this.catalog = catalog;
        this.engine = engine;
        this.lookup = Lookup.volumes(catalog, nodeId);
    }

    /**
     * DeleteVolume: OK for a volume that is gone; ABORTED while it is being created; FAILED_PRECONDITION while it is
     * staged here, published or in a volume group; a delete cut short (DELETING) is finished.
     */
    public void delete(String volumeId) {
        Optional<VolumeRecord> found = lookup.toDelete(volumeId);
        if (found.isEmpty()) return;
        VolumeRecord v = found.get();
        if (v.state() == State.CREATING) throw DomainException.aborted("volume " + volumeId + " is being created");
        if (v.state() == State.DELETING) {
            finishDelete(volumeId);
            return;
        }
        if (engine.inUse(volumeId)) {
            throw DomainException.precondition("volume " + volumeId + " is staged on this node; unstage it first");
        }
        commitDelete(volumeId, tx -> {
            // in the commit only: a publish or a group may come until then, and a look before it (two more queries
            // on every delete) would only have answered a published volume's refusal before the in-use check's
            refuseDeleteWhileUsed(volumeId, tx);
            if (!tx.volumes().deleteInState(volumeId, State.READY)) {
                throw DomainException.aborted("volume " + volumeId + " changed state; retry");
            }
        });
    }

    private static void refuseDeleteWhileUsed(String volumeId, CatalogTables tables) {
        List<PublicationRecord> publications = tables.publications().ofVolume(volumeId);
        if (!publications.isEmpty()) {
            throw DomainException.precondition("volume " + volumeId + " is published to node "
                    + publications.getFirst().nodeId() + "; call ControllerUnpublishVolume first");
        }
        List<String> groups = tables.volumeGroups().groupsOf(volumeId);
        if (!groups.isEmpty()) {
            throw DomainException.precondition("volume " + volumeId + " is in volume group " + groups.getFirst()
                    + "; remove it from the group first (ModifyVolumeGroupMembership)");
        }
    }

    /**
     * Commit and effect of a delete whose intent is recorded (a DELETING row, a CREATING one rolled back); also
     * the reconciler's and DeleteVolumeGroup's way to finish one. FAILED_PRECONDITION, row untouched, while the
     * volume is attached here.
     */
    public void finishDelete(String volumeId) {
        if (engine.inUse(volumeId)) {
            throw DomainException.precondition("volume " + volumeId + " is attached on this node; unstage it first");
        }
        commitDelete(volumeId, tx -> {
            tx.publications().ofVolume(volumeId).forEach(p -> tx.publications().delete(volumeId, p.nodeId()));
            tx.volumeGroups().groupsOf(volumeId).forEach(g -> tx.volumeGroups().removeMember(g, volumeId));
            tx.volumes().delete(volumeId);
        });
    }

    /**
     * One transaction runs {@code removeRow} and records the volume's tombstone (the commit, the call's one
     * sync), then the files are unlinked unsynced. Every {@link #TOMBSTONE_BATCH} unlinks, one sync of the
     * pool's directory makes them durable and the commit also drops their tombstones.
     */
    private void commitDelete(String volumeId, Consumer<CatalogTransaction> removeRow) {
        List<String> durablyGone = List.of();
        if (unlinked.size() >= TOMBSTONE_BATCH) {
            durablyGone = drain(TOMBSTONE_BATCH);
            engine.syncDeletes();
        }
        List<String> purge = durablyGone;
        try {
            catalog.inTransaction(tx -> {                                                   // commit
                removeRow.accept(tx);
                tx.tombstones().add(volumeId);
                tx.tombstones().remove(purge);
                return null;
            });
        } catch (RuntimeException e) {
            unlinked.addAll(purge);       // synced already: dropped with a later commit
            throw e;
        }
        engine.deleteVolume(volumeId);                                                      // effect
        unlinked.add(volumeId);
    }

    private List<String> drain(int max) {
        List<String> ids = new ArrayList<>();
        for (String id; ids.size() < max && (id = unlinked.poll()) != null; ) ids.add(id);
        return ids;
    }

    /**
     * Syncs away the unlinks done so far and drops their tombstones (at close: a clean stop leaves none).
     * The reconciler does the same at start-up for whatever a crash left.
     */
    public void flushTombstones() {
        List<String> ids = drain(Integer.MAX_VALUE);
        if (ids.isEmpty()) return;
        engine.syncDeletes();
        catalog.tombstones().remove(ids);
    }
}
