package io.csi4j.driver.group;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.DriverConfig.GroupDeletePolicy;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.CatalogTables;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.PublicationRecord;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeGroupRecord;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.volume.Lookup;
import io.csi4j.driver.volume.VolumeRules;
import io.csi4j.driver.volume.Volumes;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SequencedSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * CSI-Addons volume groups: a named set of this node's volumes. A group has no storage of its own, so
 * create and modify are one catalog transaction each (checks and writes together: two concurrent calls
 * cannot both pass a check the other invalidates). Delete with {@link GroupDeletePolicy#DELETE_VOLUMES} is
 * intent → effect → commit: the group and every member are marked DELETING in one transaction, the member
 * artifacts are removed, then the rows go; a crash half-way is finished by the {@code Reconciler}.
 *
 * <p>Parameters (CreateVolumeGroup, ModifyVolumeGroupMembership): this driver takes none of its own; keys
 * starting with {@value VolumeRules#KUBERNETES_PREFIX} (what Kubernetes components add) are accepted, anything
 * else is INVALID_ARGUMENT. Create keeps them and compares them for idempotency; Modify only validates them.
 */
public final class VolumeGroups {
    /** Volume group context key carrying the group's name (the wire's VolumeGroup has no name field). */
    public static final String CONTEXT_NAME = "csi4j.io/name";

    /** A group with its member volumes, sorted by id. */
    public record Group(VolumeGroupRecord record, List<VolumeRecord> members) {
        public Group {
            members = List.copyOf(members);
        }

        public String id() {
            return record.id();
        }

        public List<String> memberIds() {
            return members.stream().map(VolumeRecord::id).toList();
        }
    }

    /** Points of a delete where tests stop the process to prove the reconciler finishes the rest. */
    public enum Step { DELETE_INTENT_COMMITTED, MEMBER_DELETED }

    @FunctionalInterface
    public interface StepListener {
        StepListener NONE = (step, id) -> {};

        void reached(Step step, String objectId);
    }

    private final Catalog catalog;
    private final PoolStorage engine;
    private final Volumes volumes;
    private final DriverConfig config;
    private final InstantSource clock;
    private final StepListener steps;
    private final Lookup<VolumeGroupRecord> lookup;

    public VolumeGroups(Catalog catalog, PoolStorage engine, Volumes volumes, DriverConfig config, InstantSource clock) {
        this(catalog, engine, volumes, config, clock, StepListener.NONE);
    }

    public VolumeGroups(Catalog catalog, PoolStorage engine, Volumes volumes, DriverConfig config, InstantSource clock,
                        StepListener steps) {
        this.catalog = catalog;
        this.engine = engine;
        this.volumes = volumes;
        this.config = config;
        this.clock = clock;
        this.steps = steps;
        this.lookup = Lookup.volumeGroups(catalog, config.nodeId());
    }

    // ---- CreateVolumeGroup ----

    /**
     * Creates the group {@code name} holding {@code volumeIds} (may be empty), or returns the existing one
     * when its parameters and its current members are exactly those asked for (ALREADY_EXISTS otherwise).
     */
    public Group create(String name, Map<String, String> parameters, List<String> volumeIds) {
        if (name == null || name.isEmpty()) throw DomainException.invalid("name is REQUIRED");
        validateParameters(parameters, "CreateVolumeGroup");
        SequencedSet<String> wanted = distinct(volumeIds);
        return catalog.inTransaction(tx -> {
            Optional<VolumeGroupRecord> existing = tx.volumeGroups().byName(name);
            if (existing.isPresent()) return withMembers(tx, existingIfCompatible(tx, existing.get(), parameters, wanted));
            List<VolumeRecord> members = resolve(tx, wanted);
            checkOneNode(members, wanted, true);
            checkNotInOtherGroups(tx, wanted, null);
            checkLimit(wanted.size());
            var now = clock.instant();
            var group = new VolumeGroupRecord(ObjectId.generate(Kind.VOLUME_GROUP, config.nodeId()).toString(), name,
                    parameters, State.READY, now, now);
            tx.volumeGroups().insert(group);
            wanted.forEach(v -> tx.volumeGroups().addMember(group.id(), v));
            return withMembers(tx, group);
        });
    }

    private VolumeGroupRecord existingIfCompatible(CatalogTables tx, VolumeGroupRecord g, Map<String, String> parameters,
                                        SequencedSet<String> wanted) {
        if (g.state() != State.READY) throw DomainException.aborted("volume group '" + g.name() + "' is being deleted");
        List<String> differences = new ArrayList<>();
        if (!g.parameters().equals(parameters)) differences.add("its parameters are " + new TreeMap<>(g.parameters()));
        var members = new TreeSet<>(tx.volumeGroups().members(g.id()));
        if (!members.equals(new TreeSet<>(wanted))) differences.add("its volumes are " + members);
        if (!differences.isEmpty()) {
            throw DomainException.exists("volume group '" + g.name() + "' already exists (" + g.id() + ") but "
                    + String.join("; ", differences));
        }
        return g;
    }

    // ---- ModifyVolumeGroupMembership ----

    /**
     * Makes the group's members exactly {@code volumeIds}: members not listed are removed, then listed
     * volumes that are not members are added, all in one transaction. Empty empties the group.
     */
    public Group modify(String groupId, List<String> volumeIds, Map<String, String> parameters) {
        validateParameters(parameters, "ModifyVolumeGroupMembership");
        SequencedSet<String> wanted = distinct(volumeIds);
        lookup.local(groupId);
        return catalog.inTransaction(tx -> {
            VolumeGroupRecord g = tx.volumeGroups().byId(groupId).orElseThrow(() -> lookup.notFound(groupId));
            if (g.state() != State.READY) throw DomainException.aborted("volume group " + groupId + " is being deleted");
            var current = new LinkedHashSet<>(tx.volumeGroups().members(groupId));
            var toRemove = new ArrayList<>(current);
            toRemove.removeAll(wanted);
            var toAdd = new LinkedHashSet<>(wanted);
            toAdd.removeAll(current);
            if (!toAdd.isEmpty()) {
                List<VolumeRecord> added = resolve(tx, toAdd);
                checkOneNode(added, toAdd, false);
                checkNotInOtherGroups(tx, toAdd, groupId);
                checkLimit(wanted.size());
            }
            toRemove.forEach(v -> tx.volumeGroups().removeMember(groupId, v));
            toAdd.forEach(v -> tx.volumeGroups().addMember(groupId, v));
            return withMembers(tx, g);                          // as committed, not as a later call left it
        });
    }

    // ---- DeleteVolumeGroup ----

    /**
     * Deletes the group; OK when it does not exist. Its members are deleted with it
     * ({@link GroupDeletePolicy#DELETE_VOLUMES}), or it must be empty ({@link GroupDeletePolicy#RETAIN_VOLUMES}).
     */
    public void delete(String groupId) {
        Optional<VolumeGroupRecord> found = lookup.toDelete(groupId);
        if (found.isEmpty()) return;                                // not ours, or already gone: OK (seed)
        VolumeGroupRecord g = found.get();
        switch (g.state()) {
            case CREATING -> throw DomainException.aborted("volume group " + groupId + " is being created");
            case DELETING -> {}                                     // a delete cut short: finish it
            case READY -> markDeleting(g);
        }
        finishDelete(groupId);
    }

    /** Intent: the group and its members become DELETING together, after every precondition holds. */
    private void markDeleting(VolumeGroupRecord g) {
        List<String> members = catalog.volumeGroups().members(g.id());
        if (!members.isEmpty() && config.groupDeletePolicy() == GroupDeletePolicy.RETAIN_VOLUMES) {
            throw DomainException.precondition("volume group " + g.id() + " still has volumes " + members
                    + "; this plugin does not delete them with the group (DO_NOT_ALLOW_VG_TO_DELETE_VOLUMES): remove "
                    + "them first (ModifyVolumeGroupMembership with an empty list)");
        }
        for (String v : members) {                                  // the kernel, not the catalog, knows this
            if (engine.inUse(v)) {
                throw DomainException.precondition("volume group " + g.id() + " is in use: its volume " + v
                        + " is staged or published on this node; unpublish and unstage it first");
            }
        }
        catalog.inTransaction(tx -> {
            List<String> now = tx.volumeGroups().members(g.id());
            if (!now.equals(members)) throw DomainException.aborted("volume group " + g.id() + " changed members; retry");
            List<String> cutting = tx.snapshots().inState(State.CREATING).stream()
                    .filter(s -> now.contains(s.sourceVolumeId())).map(SnapshotRecord::sourceVolumeId).distinct().toList();
            if (!cutting.isEmpty()) {
                throw DomainException.precondition("volume group " + g.id() + " is in use: a snapshot of its volumes "
                        + cutting + " is being cut; retry when it is done");
            }
            for (String v : now) {
                List<PublicationRecord> published = tx.publications().ofVolume(v);
                if (!published.isEmpty()) {
                    throw DomainException.precondition("volume group " + g.id() + " is in use: its volume " + v
                            + " is published to node " + published.getFirst().nodeId()
                            + "; call ControllerUnpublishVolume first");
                }
                List<String> others = new ArrayList<>(tx.volumeGroups().groupsOf(v));
                others.remove(g.id());
                if (!others.isEmpty()) {
                    throw DomainException.precondition("volume group " + g.id() + " cannot delete its volume " + v
                            + ": it is also in volume group " + others.getFirst() + "; remove it from one of them first");
                }
                if (!tx.volumes().setState(v, State.READY, State.DELETING)) {
                    throw DomainException.aborted("volume " + v + " of volume group " + g.id() + " changed state; retry");
                }
            }
            if (!tx.volumeGroups().setState(g.id(), State.READY, State.DELETING)) {
                throw DomainException.aborted("volume group " + g.id() + " changed state; retry");
            }
            return null;
        });
        steps.reached(Step.DELETE_INTENT_COMMITTED, g.id());
    }

    /**
     * Effect and commit of a delete whose intent is recorded: each DELETING member goes (artifact, then
     * row), then the group row. Idempotent, so a repeated DeleteVolumeGroup finishes a failed one.
     */
    public void finishDelete(String groupId) {
        for (String v : catalog.volumeGroups().members(groupId)) {
            Optional<VolumeRecord> member = catalog.volumes().byId(v);
            if (member.isPresent() && member.get().state() == State.DELETING) {
                volumes.deletion().finishDelete(v);                            // effect + commit of that member
                steps.reached(Step.MEMBER_DELETED, v);
            }
        }
        catalog.inTransaction(tx -> {
            tx.volumeGroups().members(groupId).forEach(v -> tx.volumeGroups().removeMember(groupId, v));
            tx.volumeGroups().delete(groupId);
            return null;
        });
    }

    // ---- ControllerGetVolumeGroup / ListVolumeGroups ----

    public Group get(String groupId) {
        lookup.local(groupId);
        return read(groupId).filter(g -> g.record().state() == State.READY).orElseThrow(() -> lookup.notFound(groupId));
    }

    /** READY groups of one keyset page; {@link Page#lastSeq()} continues after the skipped ones too. */
    public Page<Group> list(long afterSeq, int limit) {
        Page<VolumeGroupRecord> page = catalog.volumeGroups().page(afterSeq, limit);
        List<Group> groups = new ArrayList<>();
        for (VolumeGroupRecord g : page.items()) {
            if (g.state() == State.READY) groups.add(withMembers(catalog, g));
        }
        return new Page<>(groups, page.lastSeq(), page.more());
    }

    private Optional<Group> read(String groupId) {
        return catalog.volumeGroups().byId(groupId).map(g -> withMembers(catalog, g));
    }

    private static Group withMembers(CatalogTables tables, VolumeGroupRecord g) {
        List<VolumeRecord> members = new ArrayList<>();
        for (String v : tables.volumeGroups().members(g.id())) tables.volumes().byId(v).ifPresent(members::add);
        return new Group(g, members);
    }

    // ---- checks ----


    private static void validateParameters(Map<String, String> parameters, String rpc) {
        var unknown = new TreeSet<String>();
        for (String key : parameters.keySet()) {
            if (!key.startsWith(VolumeRules.KUBERNETES_PREFIX)) unknown.add(key);
        }
        if (!unknown.isEmpty()) {
            throw DomainException.invalid("unknown " + rpc + " parameters " + unknown + "; "
                    + DriverConfig.PLUGIN_NAME + " takes none besides keys starting with " + VolumeRules.KUBERNETES_PREFIX);
        }
    }

    private static SequencedSet<String> distinct(List<String> volumeIds) {
        var set = new LinkedHashSet<String>();
        for (String v : volumeIds) {
            if (v.isEmpty()) throw DomainException.invalid("volume_ids must not contain an empty id");
            set.add(v);
        }
        return set;
    }

    /**
     * The READY volumes with these ids; NOT_FOUND for an id of this node that has none. Ids of other
     * nodes are left out here: {@link #checkOneNode} names them.
     */
    private List<VolumeRecord> resolve(CatalogTables tx, SequencedSet<String> ids) {
        List<VolumeRecord> found = new ArrayList<>();
        for (String v : ids) {
            Optional<ObjectId> id = ObjectId.parse(Kind.VOLUME, v);
            if (id.isEmpty()) throw DomainException.notFound("volume " + v + " does not exist");
            Optional<VolumeRecord> row = tx.volumes().byId(v);
            if (row.isPresent() && row.get().state() == State.READY) {
                found.add(row.get());
            } else if (id.get().ownedBy(config.nodeId())) {
                throw DomainException.notFound("volume " + v + " does not exist"
                        + (row.isPresent() ? " any more (it is being " + verb(row.get().state()) + ")" : ""));
            }
        }
        return found;
    }

    /**
     * Every volume must live on this plugin's node. Create answers FAILED_PRECONDITION (its table's "volumes
     * cannot be grouped together"); Modify INVALID_ARGUMENT (its table's "a volume to be added is
     * incompatible with other volumes in the group").
     */
    private void checkOneNode(List<VolumeRecord> found, SequencedSet<String> ids, boolean creating) {
        var byNode = new TreeMap<String, List<String>>();
        for (VolumeRecord v : found) byNode.computeIfAbsent(v.nodeId(), n -> new ArrayList<>()).add(v.id());
        for (String v : ids) {
            if (found.stream().noneMatch(r -> r.id().equals(v))) {          // resolve() left it out: another node's
                byNode.computeIfAbsent(ObjectId.parse(Kind.VOLUME, v).orElseThrow().nodeTag(), n -> new ArrayList<>()).add(v);
            }
        }
        if (byNode.keySet().stream().allMatch(config.nodeId()::equals)) return;
        var nodes = new TreeSet<>(byNode.keySet());
        nodes.add(config.nodeId());
        String message = "volumes cannot be grouped together: they live on different nodes " + nodes + " (" + byNode
                + "); a volume group holds volumes of one node, and this plugin serves node '" + config.nodeId()
                + "': send the request to the plugin of the volumes' node";
        throw creating ? DomainException.precondition(message) : DomainException.invalid(message);
    }

    /** LIMIT_VOLUME_TO_ONE_VOLUME_GROUP, when configured. */
    private void checkNotInOtherGroups(CatalogTables tx, SequencedSet<String> ids, String exceptGroupId) {
        if (!config.oneGroupPerVolume()) return;
        for (String v : ids) {
            for (String other : tx.volumeGroups().groupsOf(v)) {
                if (!other.equals(exceptGroupId)) {
                    throw DomainException.precondition("volumes cannot be grouped together: volume " + v
                            + " is already in volume group " + other + " and a volume may be in one group only "
                            + "(LIMIT_VOLUME_TO_ONE_VOLUME_GROUP); remove it from that group first");
                }
            }
        }
    }

    private void checkLimit(int members) {
        if (members > config.maxGroupMembers()) {
            throw DomainException.exhausted("a volume group holds at most " + config.maxGroupMembers()
                    + " volumes; " + members + " asked for");
        }
    }

    private static String verb(State state) {
        return state == State.CREATING ? "created" : "deleted";
    }
}
