package io.csi4j.driver.volume;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.SpaceReclaimer;
import io.csi4j.driver.model.ListedVolume;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.PublicationRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeListing;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.model.VolumeStatus;
import io.csi4j.driver.storage.StorageException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Everything that reads volumes and writes nothing: one volume by id or name, keyset pages (ListVolumes), a
 * volume's status (where it is published, its condition) and the pool's capacity (GetCapacity). A volume's
 * condition is the first of the engine's, the pool's and its replica's (set by the composition root, since only
 * replication knows it); a page asks the engine and the pool once, not once per volume.
 */
public final class VolumeReads {
    private final Catalog catalog;
    private final PoolStorage engine;
    private final PoolCapacity capacity;
    private final Lookup<VolumeRecord> lookup;
    private volatile Function<String, Optional<String>> replicaCondition = id -> Optional.empty();
    private volatile Predicate<String> secondaryHere = id -> false;

    VolumeReads(Catalog catalog, PoolStorage engine, PoolCapacity capacity, DriverConfig config) {
        this.catalog = catalog;
        this.engine = engine;
        this.capacity = capacity;
        this.lookup = Lookup.volumes(catalog, config.nodeId());
    }

    /** A READY volume of this node, or NOT_FOUND (FAILED_PRECONDITION naming the owner if it is another node's). */
    public VolumeRecord readyVolume(String volumeId, String what) {
        return lookup.ready(volumeId, what);
    }

    /** The row of this id in any state, if any. */
    public Optional<VolumeRecord> byId(String volumeId) {
        return catalog.volumes().byId(volumeId);
    }

    /** The volume of this name in any state (a crash may have left it half made), if there is one. */
    public Optional<VolumeRecord> byName(String name) {
        return catalog.volumes().byName(name);
    }

    public Page<VolumeRecord> list(long afterSeq, int limit) {
        return catalog.volumes().page(afterSeq, limit);
    }

    /** As {@link #list}, with only what ListVolumes shows of each volume (a page reads fewer columns). */
    public Page<VolumeListing> listing(long afterSeq, int limit) {
        return catalog.volumes().listingPage(afterSeq, limit);
    }

    /**
     * Set once by the composition root: which replicated volumes this node holds only a secondary copy of. ListVolumes
     * leaves them out, so a merged listing names each replicated volume once, from its primary.
     */
    public void notListed(Predicate<String> secondaryHere) {
        this.secondaryHere = secondaryHere;
    }

    /**
     * The READY volumes of one keyset page with their status, in one query and one look at the engine for the
     * page; {@link Page#lastSeq()} continues after the rows that were left out too.
     */
    public Page<ListedVolume> listReady(long afterSeq, int limit) {
        Page<VolumeListing> page = listing(afterSeq, limit);
        var hidden = secondaryHere;
        List<VolumeListing> ready = page.items().stream().filter(v -> v.state() == State.READY && !hidden.test(v.id())).toList();
        List<String> ids = ready.stream().map(VolumeListing::id).toList();
        var published = publishedNodes(ids);
        var conditions = conditions(ids);
        List<ListedVolume> listed = ready.stream().map(v -> new ListedVolume(v, new VolumeStatus(
                published.getOrDefault(v.id(), List.of()), conditions.get(v.id())))).toList();
        return new Page<>(listed, page.lastSeq(), page.more());
    }

    /** What ControllerGetVolume shows of a READY volume's use and health. */
    public VolumeStatus status(String volumeId) {
        return new VolumeStatus(publishedNodes(volumeId), condition(volumeId));
    }

    /** The bytes the volume's artifact takes in the pool now (what a reclaim gives back is the difference). */
    public long allocatedBytes(String volumeId) {
        return engine.capability(SpaceReclaimer.class)
                .orElseThrow(() -> StorageException.unsupported("the " + engine.name() + " engine cannot tell what a volume takes"))
                .allocatedBytes(volumeId);
    }

    public Optional<String> condition(String volumeId) {
        return engine.volumeCondition(volumeId).or(capacity::poolCondition).or(() -> replicaCondition.apply(volumeId));
    }

    /** What a replicated volume's copy here says of itself (a failover), asked after the engine's and the pool's. */
    public void replicaCondition(Function<String, Optional<String>> condition) {
        this.replicaCondition = condition;
    }

    /** What a replicated volume's copy here says of itself (a failover, a secondary left behind), if anything. */
    public Optional<String> replicaConditionOf(String volumeId) {
        return replicaCondition.apply(volumeId);
    }

    /** Why every volume of the pool is at risk now (a thin pool image whose backing filesystem is too full), if it is. */
    public Optional<String> poolCondition() {
        return capacity.poolCondition();
    }

    /** {@link #condition} of a page of volumes, in one look at the engine. */
    public Map<String, Optional<String>> conditions(List<String> volumeIds) {
        Map<String, Optional<String>> conditions = engine.volumeConditions(volumeIds);
        Optional<String> pool = volumeIds.isEmpty() ? Optional.empty() : capacity.poolCondition();   // one reading per page
        var replica = replicaCondition;
        Map<String, Optional<String>> merged = new HashMap<>(conditions);
        merged.replaceAll((id, condition) -> condition.or(() -> pool).or(() -> replica.apply(id)));
        return merged;
    }

    public List<String> publishedNodes(String volumeId) {
        return catalog.publications().ofVolume(volumeId).stream().map(PublicationRecord::nodeId).toList();
    }

    /** {@link #publishedNodes} of a page of volumes, in one query; volumes published nowhere are absent. */
    public Map<String, List<String>> publishedNodes(List<String> volumeIds) {
        return catalog.publications().nodesOf(volumeIds);
    }

    /** GetCapacity: 0 for what no volume of this node can serve (a multi-node mode, block on an engine without it). */
    public long availableCapacity(List<Capability> capabilities) {
        for (Capability c : capabilities) {
            if (c.mode().multiNode() || (c.kind() == VolumeKind.BLOCK && !engine.supportsBlock())) return 0;
        }
        return capacity.allocatable();
    }

    public long maximumVolumeSize() {
        return capacity.allocatable();
    }
}
