package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;
import static io.csi4j.driver.engine.image.ImageFormat.FILESYSTEMS;
import static io.csi4j.driver.engine.image.ImageFormat.MIB;
import static io.csi4j.driver.engine.image.ImageFormat.fileSize;
import static io.csi4j.driver.engine.image.ImageFormat.roundUp;
import static io.csi4j.driver.engine.image.ImagePool.checkCapacity;
import static io.csi4j.driver.engine.image.ImagePool.sized;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.Capabilities;
import io.csi4j.driver.engine.ChangeCheck;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.EngineCapabilities;
import io.csi4j.driver.engine.FreezeHold;
import io.csi4j.driver.engine.InPlaceApply;
import io.csi4j.driver.engine.Freezer;
import io.csi4j.driver.engine.MutableParameters;
import io.csi4j.driver.engine.NodeStorage;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.engine.PointCutter;
import io.csi4j.driver.engine.PoolEngine;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.engine.Preallocation;
import io.csi4j.driver.engine.SnapshotRanges;
import io.csi4j.driver.engine.SpaceReclaimer;
import io.csi4j.driver.engine.WriteFence;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Volumes are sparse image files in {@code <pool>/volumes/<id>.img}; the node attaches them through
 * loop devices. Filesystem volumes are formatted on first stage (ext4 by default, or xfs); block
 * volumes are the loop device itself. Snapshots ({@code <pool>/snapshots/<id>.img}), clones and
 * restores are reflinks where the pool can (xfs, btrfs), else sparse-aware copies. A mounted
 * filesystem is frozen around every cut, all members of a group together.
 *
 * <p>This class is the core (artifacts and their lifecycle); capacity is {@link ImageCapacity}, images made of
 * others' content {@link ImageCopies}, growing and removing {@link ImageVolumes}, and each capability a class of its own, registered in {@link #offered}.
 */
public final class ImageEngine extends PoolEngine {

    /**
     * @param overcommitRatio how many times the pool's size may be promised to (thin) volumes
     * @param directIo        loop devices read and write the image with O_DIRECT: no second copy in the page cache
     */
    public record Options(double overcommitRatio, boolean directIo) {
        public Options {
            if (!(overcommitRatio > 0) || Double.isInfinite(overcommitRatio)) {
                throw new IllegalArgumentException("overcommit ratio must be > 0: " + overcommitRatio);
            }
        }

        public static Options defaults() {
            return new Options(1.0, DataPath.CONFIGURED.volumeDirectIo());
        }
    }


    private final Options options;
    private final ImagePool images;
    private final ImageCapacity capacity;
    private final ImageFreezer freezer;
    private final ImageCopies copies;
    private final CutDeltas deltas;
    private final ImageVolumes volumes;
    private final UnattachedLooks unattached = new UnattachedLooks(LoopDevice::attachesStarted, System::nanoTime);
    private final ImageConditions conditions;
    private final Capabilities offered;
    private final ImageMover mover;

    private ImageEngine(Pool pool, Options options) {
        super(pool, ImagePool.NAME, new EngineCapabilities(true, FILESYSTEMS, Set.of("readAheadKiB", "compression")), ".img",
                EntryType.FILE);
        this.options = options;
        this.images = new ImagePool(pool, layout, locks, store);
        this.capacity = new ImageCapacity(layout, options.overcommitRatio(), this::pool);
        this.freezer = new ImageFreezer(images);
        this.deltas = new CutDeltas();
        this.copies = new ImageCopies(images, capacity, freezer, deltas);
        this.volumes = new ImageVolumes(images, capacity, unattached);
        this.conditions = new ImageConditions(images);
        LoopStaging staging = new LoopStaging(options.directIo());
        ImageNode node = new ImageNode(images, staging, freezer);
        this.mover = new ImageMover(images, capacity, freezer);
        this.offered = Capabilities.builder()
                .add(NodeStorage.class, node)
                .add(Freezer.class, freezer)
                .add(SnapshotRanges.class, new ImageBlockMaps(images, deltas))
                .add(DataMover.class, mover)
                .add(InPlaceApply.class, new InPlaceRounds(images, capacity, mover, InPlaceRounds.Steps.NONE))
                .add(SpaceReclaimer.class, new ImageReclaimer(images, staging, node))
                .add(Preallocation.class, new ImagePreallocation(images, volumes))
                .add(WriteFence.class, new ImageWriteFence(images))
                .add(PointCutter.class, this::cutPoint)
                .add(ChangeCheck.class, new ImageChangeCheck(images))
                .build();
    }

    /** What the incremental cuts found: tests of the sender's delta. */
    CutDeltas cutDeltas() {
        return deltas;
    }

    /** The in-place rounds told each step of a commit: tests that stop one there, as a crash would. */
    InPlaceRounds inPlace(InPlaceRounds.Steps steps) {
        return new InPlaceRounds(images, capacity, mover, steps);
    }

    /** The pool's files: tests of the replica layout. */
    ImagePool images() {
        return images;
    }

    /** The cuts' freezer: tests of what waits for a cut. */
    ImageFreezer freezer() {
        return freezer;
    }

    public static ImageEngine open(Pool pool, Options options) {
        return new ImageEngine(pool, options);
    }

    @Override
    protected Capabilities offered() {
        return offered;
    }

    @Override
    protected long allocatable(FsStats stats, long provisioned) {
        return capacity.allocatable(stats, provisioned);
    }

    @Override
    public List<String> notices() {
        List<String> notices = new ArrayList<>();
        notices.add(pool.describe());
        if (options.overcommitRatio() != 1.0) {
            notices.add("capacity is thin: volumes may promise up to " + options.overcommitRatio() + "x the pool's size");
        }
        return notices;
    }

    @Override
    protected long provisioned() {
        return capacity.provisioned();
    }

    // ---- controller side ----

    @Override
    public long blankSize(long capacityBytes, AccessType access) {
        checkCapacity(capacityBytes);
        return roundUp(capacityBytes, access);
    }

    /**
     * Sidecar, then a sparse image of the size, both under their final names and nothing synced: a blank
     * volume is derivable from its catalog row, whose commit is the create's one sync (see the interface).
     */
    @Override
    public long createVolume(String volumeId, long capacityBytes, AccessType access, Artifact.Label label) {
        PoolLayout.checkId("volume", volumeId);
        long size = blankSize(capacityBytes, access);
        return translate("creating volume " + volumeId, () -> locks.locked(volumeId, () -> {
            if (existing(volumeId, size, "", label)) return size;
            capacity.reserve(size, "volume " + volumeId);
            boolean made = false;
            try {
                layout.writeSidecarUnsynced(blank(volumeId, size, access, label));
                DataPath.CONFIGURED.createImage(images.image(volumeId), size);
                made = true;
            } finally {
                capacity.settle(size, made ? size : 0);
                if (!made) PoolLayout.deleteQuietly(layout.sidecar(Artifact.Kind.VOLUME, volumeId));
            }
            return size;
        }));
    }

    @Override
    protected void checkBlank(long sizeBytes, AccessType access) {
        checkCapacity(sizeBytes);
    }

    @Override
    protected boolean remakeBlank(String volumeId, long sizeBytes, AccessType access, Artifact.Label label) {
        Path image = images.image(volumeId);
        if (!store.exists(Artifact.Kind.VOLUME, volumeId)) {
            layout.writeSidecarUnsynced(blank(volumeId, sizeBytes, access, label));
            DataPath.CONFIGURED.createImage(image, sizeBytes);
            capacity.settle(0, sizeBytes);
            return true;
        }
        long current = fileSize(image);
        if (current >= sizeBytes) return false;
        sized(image, sizeBytes);   // a power cut kept the name but not the size
        capacity.settle(0, sizeBytes - current);
        return true;
    }

    /** An image's size is its length (an expansion changes the file first). */
    @Override
    protected long volumeSize(String volumeId, long recorded) {
        return fileSize(images.image(volumeId));
    }

    @Override
    public long restoreSnapshot(String volumeId, String snapshotId, long capacityBytes, AccessType access,
                                Artifact.Label label) {
        checkCapacity(capacityBytes);
        return fromSource(volumeId, Artifact.Kind.SNAPSHOT, snapshotId, () -> materialize(volumeId, images.snapshotImage(snapshotId),
                capacityBytes, access, Artifact.snapshotSource(snapshotId), List.of(), label));
    }

    @Override
    public long cloneVolume(String volumeId, String sourceVolumeId, long capacityBytes, AccessType access,
                            Artifact.Label label) {
        checkCapacity(capacityBytes);
        return fromSource(volumeId, Artifact.Kind.VOLUME, sourceVolumeId, () -> materialize(volumeId, images.image(sourceVolumeId),
                capacityBytes, access, Artifact.volumeSource(sourceVolumeId), List.of(sourceVolumeId), label));
    }

    /** A new volume from {@code source}'s content, cut while {@code freeze}'s filesystems are frozen. */
    private long materialize(String volumeId, Path source, long capacityBytes, AccessType access, String sourceRef,
                             List<String> freeze, Artifact.Label label) {
        long sourceSize = fileSize(source);
        long size = capacityBytes == 0 ? sourceSize : Math.max(Math.ceilDiv(capacityBytes, MIB) * MIB, sourceSize);
        if (capacityBytes != 0 && capacityBytes < sourceSize) {
            throw StorageException.outOfRange(sourceRef + " holds " + sourceSize + " bytes; " + capacityBytes + " cannot hold it");
        }
        if (existing(volumeId, size, sourceRef, label)) return size;
        return copies.volume(volumeId, source, sourceSize, size, access, sourceRef, freeze, label);
    }

    @Override
    public void deleteVolume(String volumeId) {
        volumes.delete(volumeId);
        deltas.forget(volumeId);   // its last cut's ranges (up to CutDeltas.MAX_RANGES) would stay for the agent's life
    }

    @Override
    public boolean inUse(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        // also a device of an image of it that was since replaced (a mount on it is a use however it came about)
        return translate("looking up volume " + volumeId, () -> {
            long quiet = LoopDevice.quietAttaches();
            boolean used = !LoopDevice.findUsingCanonicalPath(images.image(volumeId)).isEmpty();
            if (!used) unattached.remember(volumeId, quiet);   // a delete's own look under the lock may rely on it
            return used;
        });
    }

    @Override
    public long expandVolume(String volumeId, long newCapacityBytes) {
        return volumes.expand(volumeId, newCapacityBytes);
    }

    @Override
    public long createSnapshot(String snapshotId, String volumeId, Artifact.Label label) {
        PoolLayout.checkId("snapshot", snapshotId);
        PoolLayout.checkId("volume", volumeId);
        return createGroupSnapshot(Map.of(snapshotId, volumeId), label, null).get(snapshotId);
    }

    /** {@link PointCutter}: one point, incremental since its secondary's base when {@link IncrementalCut} can. */
    private long cutPoint(String snapshotId, String volumeId, Artifact.Label label, String baseSnapshotId) {
        PoolLayout.checkId("snapshot", snapshotId);
        PoolLayout.checkId("volume", volumeId);
        String base = validOrNone(baseSnapshotId);
        return translate("cutting point " + snapshotId + " of " + volumeId,
                () -> snapshotGroup(Map.of(snapshotId, volumeId), label, null, base.isEmpty() ? Map.of() : Map.of(snapshotId, base)))
                .get(snapshotId);
    }

    /** A base is a hint: one that is no valid id is none (a whole cut), never a failed cut. */
    private static String validOrNone(String baseSnapshotId) {
        try {
            return baseSnapshotId.isEmpty() ? "" : PoolLayout.checkId("snapshot", baseSnapshotId);
        } catch (RuntimeException e) {
            return "";
        }
    }

    @Override
    protected Map<String, Long> snapshotGroup(Map<String, String> members, Artifact.Label label, FreezeHold held) {
        return snapshotGroup(members, label, held, Map.of());
    }

    private Map<String, Long> snapshotGroup(Map<String, String> members, Artifact.Label label, FreezeHold held, Map<String, String> bases) {
        for (String volumeId : members.values()) {
            store.require(Artifact.Kind.VOLUME, volumeId);
        }
        Map<String, Long> done = copies.completed(members);
        if (done.size() == members.size()) {
            done.keySet().forEach(id -> store.relabel(Artifact.Kind.SNAPSHOT, id, label));
            return done;
        }
        // some but not all: left by an interrupted cut, not consistent with a new one; start over
        done.keySet().forEach(id -> layout.delete(Artifact.Kind.SNAPSHOT, id));
        return sourcesStayed(members.values(), () -> {
            try {
                return copies.snapshots(members, label, held, bases);
            } catch (RuntimeException e) {
                deleteMembers(members.keySet(), e);
                throw e;
            }
        });
    }

    @Override
    public void modifyVolume(String volumeId, Map<String, String> mutableParameters) {
        PoolLayout.checkId("volume", volumeId);
        MutableParameters parameters = mutableParameters(mutableParameters);
        run("modifying volume " + volumeId, () -> {
            store.require(Artifact.Kind.VOLUME, volumeId);
            Path image = images.image(volumeId);
            parameters.readAheadKiB().ifPresent(kib -> {
                for (LoopDevice device : LoopDevice.findByBackingFile(image)) LoopStaging.applyReadAhead(device.node(), kib);
            });
            parameters.compression().ifPresent(c -> MutableParameters.setBtrfsCompression(image, c));
        });
    }

    @Override
    public Optional<String> volumeCondition(String volumeId) {
        return conditions.of(volumeId);
    }

    @Override
    public Map<String, Optional<String>> volumeConditions(List<String> volumeIds) {
        return conditions.of(volumeIds);
    }

    /** The sidecar's description with the image's size now (an expansion changes the file first). */
    @Override
    public Optional<Artifact> artifact(Artifact.Kind kind, String id) {
        return store.sidecar(kind, id).map(a -> translate("reading " + id, () -> a.withSize(fileSize(layout.artifact(kind, id)))));
    }

    @Override
    public List<Path> removeTemporaryArtifacts() {
        List<Path> removed = new ArrayList<>(super.removeTemporaryArtifacts());
        removed.addAll(translate("thawing volumes left frozen", freezer::thawLeftFrozen));
        return removed;
    }

    @Override
    public void close() {
        // nothing held: the kernel keeps mounts and loop devices, and the next start reads them back
    }
}
