package io.csi4j.driver.volume;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.engine.PoolBacking;
import io.csi4j.driver.engine.PoolStorage;
import java.time.InstantSource;
import java.util.Optional;

/**
 * The controller side's volumes, wired once: the parts share one catalog, one engine and one view of the pool's
 * capacity, and a creation rolls back through the deletion's protocol. It does nothing itself; a caller asks the part
 * it needs ({@code volumes.creation().create(...)}), so what a service uses of volumes is visible at its call sites.
 * <ul>
 *   <li>{@link VolumeRules}: what a request may ask of this node (parameters, capabilities, topology); no writes.</li>
 *   <li>{@link VolumeReads}: one volume, pages, status and conditions, the pool's capacity.</li>
 *   <li>{@link VolumeDeletion}: DeleteVolume and the end of every delete; tombstones.</li>
 *   <li>{@link VolumeCreation}: CreateVolume of every kind, each its crash-safe protocol.</li>
 *   <li>{@link VolumeChanges}: expand, modify, a secondary copy's new image.</li>
 *   <li>{@link VolumePublications}: ControllerPublish/Unpublish bookkeeping.</li>
 * </ul>
 */
public final class Volumes {
    private final VolumeRules rules;
    private final VolumeReads reads;
    private final VolumeCreation creation;
    private final VolumeDeletion deletion;
    private final VolumeChanges changes;
    private final VolumePublications publications;

    public Volumes(Catalog catalog, PoolStorage engine, DriverConfig config, InstantSource clock) {
        this(catalog, engine, Optional.empty(), config, clock);
    }

    /** {@code backing}: the watch of the pool image's backing filesystem, when the pool is a thin image. */
    public Volumes(Catalog catalog, PoolStorage engine, Optional<PoolBacking> backing, DriverConfig config, InstantSource clock) {
        var capacity = new PoolCapacity(engine, backing, config.overcommitRatio());
        this.rules = new VolumeRules(engine, config);
        this.reads = new VolumeReads(catalog, engine, capacity, config);
        this.deletion = new VolumeDeletion(catalog, engine, config.nodeId());
        this.creation = new VolumeCreation(catalog, engine, capacity, config, clock, rules, reads, deletion);
        this.changes = new VolumeChanges(catalog, engine, capacity, config, reads);
        this.publications = new VolumePublications(catalog, config, clock, reads);
    }

    public VolumeRules rules() { return rules; }

    public VolumeReads reads() { return reads; }

    public VolumeCreation creation() { return creation; }

    public VolumeDeletion deletion() { return deletion; }

    public VolumeChanges changes() { return changes; }

    public VolumePublications publications() { return publications; }
}
