package io.csi4j.driver.node;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.PublishOptions;
import io.csi4j.driver.engine.SpaceReclaimer;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.engine.VolumeStats;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.MutableParameters;
import io.csi4j.driver.volume.NewVolume;
import io.csi4j.driver.volume.SpaceUsage;
import io.csi4j.driver.volume.VolumeRules;
import io.csi4j.driver.volume.VolumeShape;
import io.csi4j.driver.volume.Volumes;
import io.csi4j.driver.replication.ReplicaStates;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Node-side volume operations. State comes from the kernel (the engine reads the mount table and
 * the loop devices), never from a cache, so every call is idempotent across plugin restarts.
 */
public final class NodeVolumes {
    public static final String EPHEMERAL = "csi.storage.k8s.io/ephemeral";
    /** volume_context key giving an ephemeral inline volume's size (e.g. "1Gi" is the CO's job; we take bytes). */
    public static final String EPHEMERAL_SIZE = "csi4j.io/size";
    private static final String EPHEMERAL_NAME_PREFIX = "ephemeral-";

    private final Catalog catalog;
    private final NodeStorage engine;
    private final String engineName;
    private final Optional<SpaceReclaimer> reclaimer;
    private final Volumes volumes;
    private final DriverConfig config;
    private final EphemeralTombstones tombstones;
    /** Replicated volumes' roles here: only the primary of the highest epoch is staged or published writable. */
    private final ReplicaStates replicas;

    /** {@code storage} must offer a node side ({@link NodeStorage}); its {@link SpaceReclaimer} serves NodeReclaimSpace. */
    public NodeVolumes(Catalog catalog, PoolStorage storage, Volumes volumes, DriverConfig config) {
        this(catalog, storage, volumes, config, new ReplicaStates(config.dataDir().resolve(ReplicaStates.DIRECTORY)));
    }

    public NodeVolumes(Catalog catalog, PoolStorage storage, Volumes volumes, DriverConfig config, ReplicaStates replicas) {
        this.replicas = replicas;
        this.catalog = catalog;
        this.engine = storage.capability(NodeStorage.class)
                .orElseThrow(() -> new IllegalStateException("the " + storage.name() + " engine has no node side"));
        this.engineName = storage.name();
        this.reclaimer = storage.capability(SpaceReclaimer.class);
        this.volumes = volumes;
        this.config = config;
        this.tombstones = new EphemeralTombstones(config.dataDir().resolve("ephemeral-unpublished"));
    }

    public void stage(String volumeId, Path stagingPath, Capability capability) {
        // fencing first (docs/replication.md): a secondary's copy is not a volume of this node's catalog yet
        boolean writable = !capability.mode().readOnly();
        if (writable) replicas.checkWritable(volumeId);
        VolumeRecord v = volumes.reads().readyVolume(volumeId, "volume");
        checkCapability(v, capability);
        requireAbsolute(stagingPath, "staging_target_path");
        requireNoPlantedSymlink(stagingPath, "staging_target_path");
        // checked again with the mount, under the lock a demote or fence holds: neither slips between them
        if (writable) replicas.whileWritable(volumeId, () -> engine.stage(volumeId, stagingPath, stageOptions(v, capability)));
        else engine.stage(volumeId, stagingPath, stageOptions(v, capability));
    }

    public void unstage(String volumeId, Path stagingPath) {
        volumes.reads().readyVolume(volumeId, "volume");
        requireAbsolute(stagingPath, "staging_target_path");
        engine.unstage(volumeId, stagingPath);
    }

    public void publish(String volumeId, Optional<Path> stagingPath, Path targetPath, Capability capability,
                        boolean readOnly, Map<String, String> volumeContext) {
        requireAbsolute(targetPath, "target_path");
        requireNoPlantedSymlink(targetPath, "target_path");
        if ("true".equals(volumeContext.get(EPHEMERAL))) {
            publishEphemeral(volumeId, targetPath, capability, readOnly, volumeContext);
            return;
        }
        VolumeRecord v = volumes.reads().readyVolume(volumeId, "volume");
        checkCapability(v, capability);
        Path staging = stagingPath.orElseThrow(() -> DomainException.precondition(
                "staging_target_path is not set; this plugin has STAGE_UNSTAGE_VOLUME: call NodeStageVolume first"));
        requireAbsolute(staging, "staging_target_path");
        checkSingleWriter(v, staging, targetPath, capability);
        // ControllerPublishVolume(readonly=true) binds the node: the SP MUST publish it read-only (spec).
        boolean controllerReadOnly = catalog.publications().get(volumeId, config.nodeId())
                .map(p -> p.readOnly()).orElse(false);
        boolean writable = !(readOnly || controllerReadOnly || capability.mode().readOnly());
        if (writable) replicas.checkWritable(volumeId);
        var options = publishOptions(v, capability, readOnly || controllerReadOnly);
        // checked again with the bind mount, under the lock a demote or fence holds
        if (writable) replicas.whileWritable(volumeId, () -> engine.publish(volumeId, staging, targetPath, options));
        else engine.publish(volumeId, staging, targetPath, options);
    }

    public void unpublish(String volumeId, Path targetPath) {
        requireAbsolute(targetPath, "target_path");
        Optional<VolumeRecord> ephemeral = catalog.volumes().byName(EPHEMERAL_NAME_PREFIX + volumeId);
        if (ephemeral.isPresent()) {
            unpublishEphemeral(ephemeral.get(), targetPath);
            return;
        }
        if (tombstones.contains(volumeId) && !Files.exists(targetPath)) {
            return;   // an ephemeral volume whose unpublish finished before: the retry is OK (idempotent)
        }
        volumes.reads().readyVolume(volumeId, "volume");
        engine.unpublish(volumeId, targetPath);
    }

    public VolumeStats stats(String volumeId, Path volumePath) {
        String id = resolveEphemeral(volumeId);
        volumes.reads().readyVolume(id, "volume");
        requireVolumePath(volumePath);
        VolumeStats stats = engine.stats(id, volumePath);
        if (stats.abnormal().isPresent()) return stats;
        Optional<String> pool = volumes.reads().poolCondition()    // its thin pool image cannot hold what it promised
                .or(() -> volumes.reads().replicaConditionOf(id));
        return pool.isEmpty() ? stats : new VolumeStats(stats.totalBytes(), stats.usedBytes(), stats.availableBytes(),
                stats.totalInodes(), stats.usedInodes(), stats.availableInodes(), pool);
    }

    /**
     * Gives the free space of a staged or published filesystem volume back to the pool (FITRIM through its
     * loop device). A block volume is refused: its blocks are its consumer's, and nothing here can tell which
     * of them are free. The consumer discards them itself (BLKDISCARD, or fstrim of a filesystem it made), and
     * the loop device already passes those discards to the image as holes.
     */
    public SpaceUsage reclaimSpace(String volumeId, Path volumePath) {
        String id = resolveEphemeral(volumeId);
        VolumeRecord v = volumes.reads().readyVolume(id, "volume");
        requireVolumePath(volumePath);
        if (v.kind() == VolumeKind.BLOCK) {
            throw DomainException.precondition("volume " + volumeId + " is a block volume: the plugin cannot tell which of "
                    + "its blocks are free; discard from inside (blkdiscard, or fstrim of the filesystem on it), the loop "
                    + "device passes discards to the image as holes");
        }
        long before = volumes.reads().allocatedBytes(id);
        reclaimer.orElseThrow(() -> StorageException.unsupported("the " + engineName + " engine cannot reclaim space"))
                .trim(id, volumePath);
        return new SpaceUsage(before, volumes.reads().allocatedBytes(id));
    }

    public long expand(String volumeId, Path volumePath, CapacityRange range, Optional<Capability> capability) {
        VolumeRecord v = volumes.reads().readyVolume(volumeId, "volume");
        capability.flatMap(c -> VolumeRules.unsupported(v, List.of(c))).ifPresent(why -> {
            throw DomainException.invalid("volume_capability exceeds what volume " + volumeId + " supports: " + why);
        });
        requireVolumePath(volumePath);
        if (range.limitBytes() > 0 && range.limitBytes() < v.capacityBytes()) {
            throw DomainException.outOfRange("limit_bytes " + range.limitBytes() + " is below the volume's size " + v.capacityBytes());
        }
        return engine.nodeExpand(volumeId, volumePath);
    }

    // ---- ephemeral inline volumes: created at publish, removed at unpublish ----

    private void publishEphemeral(String csiVolumeId, Path targetPath, Capability capability, boolean readOnly,
                                  Map<String, String> context) {
        if (capability.kind() != VolumeKind.FILESYSTEM) {
            throw DomainException.invalid("ephemeral inline volumes are filesystem volumes");
        }
        long size = context.containsKey(EPHEMERAL_SIZE) ? parseSize(context.get(EPHEMERAL_SIZE)) : 0;
        String name = EPHEMERAL_NAME_PREFIX + csiVolumeId;
        tombstones.remove(csiVolumeId);
        var known = new HashMap<String, String>();
        VolumeRecord v = volumes.creation().create(new NewVolume(name, new CapacityRange(size, 0), List.of(capability),
                known, Map.of(), ContentSource.NONE, Optional.empty()));
        Path staging = ephemeralStaging(v.id());
        engine.stage(v.id(), staging, stageOptions(v, capability));
        engine.publish(v.id(), staging, targetPath, publishOptions(v, capability, readOnly));
    }

    private void unpublishEphemeral(VolumeRecord v, Path targetPath) {
        engine.unpublish(v.id(), targetPath);
        Path staging = ephemeralStaging(v.id());
        engine.unstage(v.id(), staging);
        try {
            Files.deleteIfExists(staging);   // we made it at publish; nothing else will remove it
        } catch (IOException e) {
            throw new UncheckedIOException("removing " + staging, e);
        }
        volumes.deletion().delete(v.id());
        tombstones.add(v.name().substring(EPHEMERAL_NAME_PREFIX.length()));
    }

    private String resolveEphemeral(String csiVolumeId) {
        return catalog.volumes().byName(EPHEMERAL_NAME_PREFIX + csiVolumeId).filter(r -> r.state() == State.READY)
                .map(VolumeRecord::id).orElse(csiVolumeId);
    }

    private Path ephemeralStaging(String volumeId) {
        return config.dataDir().resolve("ephemeral").resolve(volumeId);
    }

    // ---- checks ----

    private void checkCapability(VolumeRecord v, Capability capability) {
        VolumeRules.unsupported(v, List.of(capability)).ifPresent(why -> {
            throw DomainException.precondition("volume " + v.id() + ": " + why);
        });
    }

    /** SINGLE_NODE_SINGLE_WRITER (and the other single-node modes, per the spec's table) allow one target only. */
    private void checkSingleWriter(VolumeRecord v, Path stagingPath, Path targetPath, Capability capability) {
        if (capability.mode() == AccessMode.SINGLE_NODE_MULTI_WRITER || capability.mode().multiNode()) return;
        if (capability.mode() == AccessMode.SINGLE_NODE_READER_ONLY) return;
        List<Path> mounts = engine.mountPoints(v.id());
        List<Path> others = mounts.stream().filter(p -> !p.equals(targetPath) && !p.equals(stagingPath)).toList();
        if (!others.isEmpty()) {
            throw DomainException.precondition(v.kind() != VolumeKind.BLOCK && !mounts.contains(stagingPath)
                    ? stagedElsewhere(v, stagingPath, others)
                    : "volume " + v.id() + " is already published at " + others.getFirst()
                            + " and access mode " + capability.mode() + " allows a single target");
        }
    }

    /**
     * A filesystem volume's staging path is one of its mount points: when the one asked for is not, the volume is
     * staged somewhere else and nothing is published from the path given (a single other mount is that stage).
     */
    private static String stagedElsewhere(VolumeRecord v, Path stagingPath, List<Path> others) {
        String where = others.size() == 1 ? "at " + others.getFirst() : "elsewhere (mounted at " + others + ")";
        return "volume " + v.id() + " is staged " + where + ", not at " + stagingPath
                + ": nothing was published; give NodePublishVolume the staging_target_path NodeStageVolume was given";
    }

    private StageOptions stageOptions(VolumeRecord v, Capability capability) {
        String readAhead = v.mutableParameters().get(MutableParameters.READ_AHEAD_KIB);
        long readAheadKiB = readAhead == null ? 0 : MutableParameters.readAheadKiB(readAhead);
        if (v.kind() == VolumeKind.BLOCK) return new StageOptions.Block(readAheadKiB);
        String fsType = VolumeShape.fsTypeOf(v);
        return new StageOptions.Mount(fsType, capability.mountFlags(), readAheadKiB);
    }

    private static PublishOptions publishOptions(VolumeRecord v, Capability capability, boolean readOnly) {
        OptionalInt group = OptionalInt.empty();
        if (!capability.mountGroup().isEmpty()) {
            try {
                group = OptionalInt.of(Integer.parseInt(capability.mountGroup()));
            } catch (NumberFormatException e) {
                throw DomainException.invalid("volume_mount_group must be a numeric group id, not '" + capability.mountGroup() + "'");
            }
        }
        return new PublishOptions(v.kind() == VolumeKind.BLOCK, readOnly || capability.mode().readOnly(),
                capability.mountFlags(), group);
    }

    /**
     * volume_path of NodeGetVolumeStats and NodeExpandVolume names where a volume already is: a relative path
     * (never one we mount at, and not to be resolved against our working directory) or a missing one names no
     * volume, NOT_FOUND per the spec ("volume ... does not exist on specified volume_path"). Paths the kernel
     * cannot take stay the caller's error.
     */
    private static void requireVolumePath(Path volumePath) {
        requireWithinLimits(volumePath, "volume_path");
        if (!volumePath.isAbsolute()) throw DomainException.notFound("volume_path " + volumePath + " is relative: no volume is published there");
        requireAbsolute(volumePath, "volume_path");
        if (!Files.exists(volumePath)) throw DomainException.notFound("volume_path " + volumePath + " does not exist");
    }

    /** Stage and publish paths are where we create mounts: they must be absolute and normalized. */
    private static void requireAbsolute(Path path, String field) {
        if (!path.isAbsolute() || !path.normalize().equals(path)) {
            throw DomainException.invalid(field + " must be an absolute, normalized path: " + path);
        }
        requireWithinLimits(path, field);
    }

    private static void requireWithinLimits(Path path, String field) {
        // what the kernel would refuse with ENAMETOOLONG: the caller's error, not the plugin's
        if (path.toString().getBytes(StandardCharsets.UTF_8).length > 4095) {
            throw DomainException.invalid(field + " is longer than PATH_MAX (4096 bytes)");
        }
        for (Path name : path) {
            if (name.toString().getBytes(StandardCharsets.UTF_8).length > 255) {
                throw DomainException.invalid(field + " has a component longer than NAME_MAX (255 bytes)");
            }
        }
    }

    /**
     * mount(2) and directory creation follow symlinks: a staging or target path that runs through a link
     * another user planted, or that is a link itself, would mount or create outside the paths the CO gave.
     * Links owned by root or by us in a parent (a relocated kubelet directory) are trusted.
     */
    private static void requireNoPlantedSymlink(Path path, String field) {
        int self = uid(Path.of("/proc/self"), true);
        Path prefix = path.getRoot();
        for (int i = 0; i < path.getNameCount(); i++) {
            prefix = prefix.resolve(path.getName(i));
            if (!Files.isSymbolicLink(prefix)) {
                if (!Files.exists(prefix, LinkOption.NOFOLLOW_LINKS)) return;   // nothing deeper exists
                continue;
            }
            boolean last = i == path.getNameCount() - 1;
            int owner = uid(prefix, false);
            if (last || (owner != 0 && owner != self)) {
                throw DomainException.invalid(field + " " + path + (last ? " is a symlink" : " goes through the symlink "
                        + prefix + " owned by uid " + owner) + "; refusing to mount through it");
            }
        }
    }

    private static int uid(Path path, boolean follow) {
        try {
            return follow ? (Integer) Files.getAttribute(path, "unix:uid")
                    : (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            throw new UncheckedIOException("reading the owner of " + path, e);
        }
    }

    private static long parseSize(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw DomainException.invalid(EPHEMERAL_SIZE + " must be a number of bytes, not '" + text + "'");
        }
    }
}
