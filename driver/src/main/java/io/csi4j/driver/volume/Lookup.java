package io.csi4j.driver.volume;

import io.csi4j.driver.catalog.CatalogTables;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.model.Catalogued;
import io.csi4j.driver.model.GroupSnapshotRecord;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeGroupRecord;
import io.csi4j.driver.model.VolumeRecord;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reading one object by an id from the wire, written once for every kind: parse the id, read the row, check
 * which node owns it, NOT_FOUND. An id that is not one of ours names nothing here; an object of another node
 * is refused with that node's name (FAILED_PRECONDITION), so the caller knows where to go.
 */
public final class Lookup<R extends Catalogued> {
    private final Kind kind;
    private final String noun;
    private final Function<String, Optional<R>> read;
    private final String nodeId;

    private Lookup(Kind kind, String noun, Function<String, Optional<R>> read, String nodeId) {
        this.kind = kind;
        this.noun = noun;
        this.read = read;
        this.nodeId = nodeId;
    }

    public static Lookup<VolumeRecord> volumes(CatalogTables tables, String nodeId) {
        return new Lookup<>(Kind.VOLUME, "volume", id -> tables.volumes().byId(id), nodeId);
    }

    public static Lookup<SnapshotRecord> snapshots(CatalogTables tables, String nodeId) {
        return new Lookup<>(Kind.SNAPSHOT, "snapshot", id -> tables.snapshots().byId(id), nodeId);
    }

    /**
     * The snapshots a CO may name: every one but replication points ({@link SnapshotRecord#isPoint()}), which answer
     * as an unknown id (NOT_FOUND). Every CO-facing read of a snapshot by id goes through this one; replication's own
     * code reads points through {@link #snapshots} (and the catalog).
     */
    public static Lookup<SnapshotRecord> coSnapshots(CatalogTables tables, String nodeId) {
        return new Lookup<>(Kind.SNAPSHOT, "snapshot", id -> tables.snapshots().byId(id).filter(s -> !s.isPoint()), nodeId);
    }

    public static Lookup<GroupSnapshotRecord> groupSnapshots(CatalogTables tables, String nodeId) {
        return new Lookup<>(Kind.GROUP_SNAPSHOT, "group snapshot", id -> tables.groupSnapshots().byId(id), nodeId);
    }

    public static Lookup<VolumeGroupRecord> volumeGroups(CatalogTables tables, String nodeId) {
        return new Lookup<>(Kind.VOLUME_GROUP, "volume group", id -> tables.volumeGroups().byId(id), nodeId);
    }

    /** The READY object, or NOT_FOUND ("volume v-... does not exist"). */
    public R ready(String id) {
        return ready(id, noun);
    }

    /** As {@link #ready(String)}, the object named {@code what} in the answer (e.g. "source volume"). */
    public R ready(String id, String what) {
        Optional<Home> parsed = home(id);
        if (parsed.isEmpty()) throw notFound(what, id);
        Optional<R> row = read.apply(id).filter(r -> r.state() == State.READY);
        if (row.isPresent()) return row.get();
        requireLocal(parsed.get(), id, what);
        throw notFound(what, id);
    }

    /** What a delete finds, in any state; empty when there is nothing to delete (a delete of it is OK). */
    public Optional<R> toDelete(String id) {
        Optional<Home> parsed = home(id);
        if (parsed.isEmpty()) return Optional.empty();                     // not an id of ours: nothing to delete
        Optional<R> row = read.apply(id);
        if (row.isEmpty()) requireLocal(parsed.get(), id, noun);           // already gone: OK (spec)
        return row;
    }

    /** An id of an object of this node, before it is read: NOT_FOUND if it is not ours at all. */
    public ObjectId local(String id) {
        ObjectId parsed = ObjectId.parse(kind, id).orElseThrow(() -> notFound(noun, id));
        requireLocal(parsed, noun);
        return parsed;
    }

    public DomainException notFound(String id) {
        return notFound(noun, id);
    }

    /** Where an id of ours lives: here or not, and the node(s) it names. A replicated volume id names every replica's node. */
    private record Home(boolean local, String where) {}

    private Optional<Home> home(String id) {
        if (kind == Kind.VOLUME) {
            Optional<ReplicatedVolumeId> replicated = ReplicatedVolumeId.parse(id);
            if (replicated.isPresent()) {
                return Optional.of(new Home(replicated.get().heldBy(nodeId), "nodes " + replicated.get().tags()));
            }
        }
        return ObjectId.parse(kind, id).map(o -> new Home(o.ownedBy(nodeId), "node '" + o.nodeTag() + "'"));
    }

    private void requireLocal(Home home, String id, String what) {
        if (!home.local()) {
            throw DomainException.precondition(what + " " + id + " lives on " + home.where()
                    + ", not on this plugin's node '" + nodeId + "'; send the request to that node's plugin");
        }
    }

    private void requireLocal(ObjectId id, String what) {
        if (!id.ownedBy(nodeId)) {
            throw DomainException.precondition(what + " " + id + " lives on node '" + id.nodeTag()
                    + "', not on this plugin's node '" + nodeId + "'; send the request to that node's plugin");
        }
    }

    private static DomainException notFound(String what, String id) {
        return DomainException.notFound(what + " " + id + " does not exist");
    }
}
