package io.csi4j.driver.snapshot;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.PointCutter;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.SnapshotFilter;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.volume.Lifecycle;
import io.csi4j.driver.volume.Lookup;
import io.csi4j.driver.volume.Volumes;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Single-volume snapshots: intent → effect (reflink or copy, frozen if mounted) → commit. */
public final class Snapshots {
    private final Catalog catalog;
    private final PoolStorage engine;
    private final Volumes volumes;
    private final DriverConfig config;
    private final InstantSource clock;
    private final Lookup<SnapshotRecord> lookup;
    private final Lookup<SnapshotRecord> coLookup;

    private final SnapshotSources sources;

    public Snapshots(Catalog catalog, PoolStorage engine, Volumes volumes, DriverConfig config, InstantSource clock) {
        this(catalog, engine, volumes, config, clock, SnapshotSources.ANY);
    }

    public Snapshots(Catalog catalog, PoolStorage engine, Volumes volumes, DriverConfig config, InstantSource clock,
            SnapshotSources sources) {
        this.sources = sources;
        this.catalog = catalog;
        this.engine = engine;
        this.volumes = volumes;
        this.config = config;
        this.clock = clock;
        this.lookup = Lookup.snapshots(catalog, config.nodeId());
        this.coLookup = Lookup.coSnapshots(catalog, config.nodeId());
    }

    public SnapshotRecord create(String name, String sourceVolumeId, Map<String, String> parameters) {
        if (SnapshotRecord.isPointName(name)) throw DomainException.invalid("snapshot names starting with " + SnapshotRecord.POINT_PREFIX + " are reserved for replication");
        // a retry by name is answered on any copy that took it (the same snapshot, or ALREADY_EXISTS): it exists already
        if (catalog.snapshots().byName(name).isEmpty()) sources.checkSnapshotSource(sourceVolumeId);
        return make(name, sourceVolumeId, parameters);
    }

    /** The snapshot of this name here, if any (whatever its state). */
    public Optional<SnapshotRecord> byName(String name) {
        return name.isEmpty() ? Optional.empty() : catalog.snapshots().byName(name);
    }

    /**
     * A replication point of a replicated volume (its name starts with {@link SnapshotRecord#POINT_PREFIX}); {@code base} (empty:
     * none) is the point its secondary holds, from which an engine that can ({@link PointCutter}) cuts only what changed.
     */
    public SnapshotRecord createPoint(String name, String sourceVolumeId, String base) {
        if (!SnapshotRecord.isPointName(name)) throw new IllegalArgumentException("not a point's name: " + name);
        return make(name, sourceVolumeId, Map.of(), base);
    }

    private SnapshotRecord make(String name, String sourceVolumeId, Map<String, String> parameters) {
        return make(name, sourceVolumeId, parameters, "");
    }

    private SnapshotRecord make(String name, String sourceVolumeId, Map<String, String> parameters, String base) {
        if (!parameters.isEmpty()) {
            throw DomainException.invalid("unknown snapshot parameters " + parameters.keySet()
                    + "; this driver takes none");
        }
        Optional<SnapshotRecord> existing = catalog.snapshots().byName(name);
        if (existing.isPresent()) {
            SnapshotRecord s = existing.get();
            if (!s.sourceVolumeId().equals(sourceVolumeId)) {
                throw DomainException.exists("snapshot '" + name + "' already exists (" + s.id()
                        + ") for source volume " + s.sourceVolumeId());
            }
            if (s.state() != State.READY) throw DomainException.aborted("snapshot '" + name + "' is being " + verb(s.state()));
            // a replicated volume's: durably when it was answered last, before the answer (of two of one name on two
            // nodes the one answered last is the one the CO may have recorded: cluster/SnapshotDuplicates)
            if (!SnapshotRecord.isPointName(name) && ReplicatedVolumeId.isReplicated(sourceVolumeId)) catalog.snapshots().setAnswered(s.id());
            return s;
        }
        volumes.reads().readyVolume(sourceVolumeId, "source volume");
        var now = clock.instant();
        var row = new SnapshotRecord(ObjectId.generate(Kind.SNAPSHOT, config.nodeId()).toString(), name,
                sourceVolumeId, 0, null, parameters, State.CREATING, now, now);
        catalog.snapshots().insert(row);                                              // intent
        return Lifecycle.effectThenCommit(
                () -> cut(row.id(), sourceVolumeId, new Artifact.Label(name, ""), base),  // labelled for fsck --rebuild
                () -> finishDelete(row.id()),
                // the answer is read in the commit: a DeleteSnapshot right after it must not turn this one into an error
                size -> catalog.inTransaction(tx -> {
                    tx.snapshots().setSize(row.id(), size);
                    if (!tx.snapshots().setState(row.id(), State.CREATING, State.READY)) {
                        throw DomainException.aborted("snapshot " + row.id() + " changed state while being created");
                    }
                    return tx.snapshots().byId(row.id()).orElseThrow();
                }));
    }

    private long cut(String snapshotId, String sourceVolumeId, Artifact.Label label, String base) {
        Optional<PointCutter> cutter = base.isEmpty() ? Optional.empty() : engine.capability(PointCutter.class);
        return cutter.isPresent() ? cutter.get().cutPoint(snapshotId, sourceVolumeId, label, base)
                : engine.createSnapshot(snapshotId, sourceVolumeId, label);
    }

    public void delete(String snapshotId) {
        remove(snapshotId, false);
    }

    /** Removes a replication point (replication's own rounds and deletes only). */
    public void deletePoint(String snapshotId) {
        remove(snapshotId, true);
    }

    private void remove(String snapshotId, boolean point) {
        Optional<SnapshotRecord> found = lookup.toDelete(snapshotId);
        if (found.isEmpty()) return;
        SnapshotRecord s = found.get();
        if (s.isPoint() != point) {
            throw DomainException.precondition("snapshot " + snapshotId + " is a replication point of volume " + s.sourceVolumeId()
                    + "; it goes with the volume's replication, not by DeleteSnapshot");
        }
        if (s.groupSnapshotId() != null) {
            throw DomainException.invalid("snapshot " + snapshotId + " is part of group snapshot "
                    + s.groupSnapshotId() + " and cannot be deleted on its own; delete the group snapshot");
        }
        if (s.state() == State.CREATING) throw DomainException.aborted("snapshot " + snapshotId + " is being created");
        if (s.state() == State.READY && !catalog.snapshots().setState(snapshotId, State.READY, State.DELETING)) {
            throw DomainException.aborted("snapshot " + snapshotId + " changed state; retry");
        }
        finishDelete(snapshotId);
    }

    public void finishDelete(String snapshotId) {
        engine.deleteSnapshot(snapshotId);
        catalog.snapshots().delete(snapshotId);
    }

    /**
     * A READY snapshot of the CO's on this node, or NOT_FOUND (FAILED_PRECONDITION naming the owner if it is another
     * node's); a replication point is NOT_FOUND, as an unknown id.
     */
    public SnapshotRecord get(String snapshotId) {
        return coLookup.ready(snapshotId);
    }

    public Page<SnapshotRecord> list(long afterSeq, int limit, SnapshotFilter filter) {
        return catalog.snapshots().page(afterSeq, limit, filter);
    }

    /**
     * Every READY snapshot a CO named here (not a replication point, not a group member) of a replicated volume, in
     * insertion order: what the controller compares across a replicated volume's nodes to find two of one name (every
     * few seconds, so the database filters; the exact id shape, a regex, is checked on its answer only).
     */
    public List<SnapshotRecord> namedOfReplicated() {
        return catalog.snapshots().named(ReplicatedVolumeId.GLOB).stream()
                .filter(s -> ReplicatedVolumeId.isReplicated(s.sourceVolumeId())).toList();
    }

    /** READY snapshots of one keyset page; {@link Page#lastSeq()} continues after the rows left out too. */
    public Page<SnapshotRecord> listReady(long afterSeq, int limit, SnapshotFilter filter) {
        Page<SnapshotRecord> page = list(afterSeq, limit, filter);
        // replication points are internal: left out like rows not READY (a page may come out short; the spec allows it)
        return new Page<>(page.items().stream().filter(s -> s.state() == State.READY && !s.isPoint()).toList(),
                page.lastSeq(), page.more());
    }

    static String verb(State state) {
        return state == State.CREATING ? "created" : "deleted";
    }
}
