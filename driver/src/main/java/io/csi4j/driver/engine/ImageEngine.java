package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.ImageFormat.DEFAULT_FS;
import static io.csi4j.driver.engine.ImageFormat.FILESYSTEMS;
import static io.csi4j.driver.engine.ImageFormat.MIB;
import static io.csi4j.driver.engine.ImageFormat.fileSize;
import static io.csi4j.driver.engine.ImageFormat.fsType;
import static io.csi4j.driver.engine.ImageFormat.roundUp;

import io.csi4j.driver.storage.StorageException;
import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.ExtentFile;
import io.csi4j.driver.os.Freeze;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.SparseCopy;
import io.csi4j.driver.os.SparseFile;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Volumes are sparse image files in {@code <pool>/volumes/<id>.img}; the node attaches them through
 * loop devices. Filesystem volumes are formatted on first stage (ext4 by default, or xfs); block
 * volumes are the loop device itself. Snapshots ({@code <pool>/snapshots/<id>.img}), clones and
 * restores are reflinks where the pool can (xfs, btrfs), else sparse-aware copies. A mounted
 * filesystem is frozen around every cut, all members of a group together.
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
    private final LoopStaging staging;
    private final Object provisioning = new Object();
    /**
     * Bytes of the volume images in the pool, counted once at open and kept up to date by every change
     * here, so that a create does not stat every image (that made it O(volumes)). Guarded by provisioning.
     */
    private long provisionedBytes;
    /** Sizes of volumes being created, restored or cloned right now: promised, not yet in provisionedBytes. */
    private long reservedBytes;

    private ImageEngine(Pool pool, Options options) {
        super(pool, "image", new EngineCapabilities(true, FILESYSTEMS, Set.of("readAheadKiB", "compression")), ".img",
                EntryType.FILE);
        this.options = options;
        this.staging = new LoopStaging(options.directIo());
        this.provisionedBytes = countProvisioned();
    }

    public static ImageEngine open(Pool pool, Options options) {
        return new ImageEngine(pool, options);
    }

    /** Thin: bounded by the overcommitted share of the pool that is not promised yet. */
    @Override
    long allocatable(FsStats stats, long provisioned) {
        return PoolInfo.allocatable(stats.totalBytes(), stats.availableBytes(), provisioned, options.overcommitRatio());
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
    long provisioned() {
        synchronized (provisioning) {
            return provisionedBytes + reservedBytes;
        }
    }

    /**
     * Promises {@code size} bytes to a volume being made (NO_SPACE if the pool cannot), until
     * {@link #settle} turns the promise into provisioned bytes or drops it. Only the check and the
     * arithmetic hold the lock: the I/O of concurrent creates runs in parallel.
     */
    private void reserve(long size, String what) {
        synchronized (provisioning) {
            requireRoom(size, what);
            reservedBytes += size;
        }
    }

    private void settle(long reserved, long provisioned) {
        synchronized (provisioning) {
            reservedBytes -= reserved;
            provisionedBytes += provisioned;
        }
    }

    private long countProvisioned() {
        long sum = 0;
        for (String id : layout.ids(Artifact.Kind.VOLUME)) {
            try {
                sum += Files.size(layout.artifact(Artifact.Kind.VOLUME, id));
            } catch (IOException e) {
                // deleted meanwhile
            }
        }
        return sum;
    }

    // ---- controller side ----



    private static void checkCapacity(long capacityBytes) {
        if (capacityBytes < 0) throw StorageException.invalid("negative capacity: " + capacityBytes);
    }

    private Path image(String volumeId) {
        return layout.artifact(Artifact.Kind.VOLUME, volumeId);
    }

    private Path snapshotImage(String snapshotId) {
        return layout.artifact(Artifact.Kind.SNAPSHOT, snapshotId);
    }

    /**
     * Sidecar, then a sparse image of the size, both under their final names and nothing synced: a blank
     * volume is derivable from its catalog row, whose commit is the create's one sync (see the interface).
     */
    @Override
    public long blankSize(long capacityBytes, AccessType access) {
        checkCapacity(capacityBytes);
        return roundUp(capacityBytes, access);
    }

    @Override
    public long createVolume(String volumeId, long capacityBytes, AccessType access, Artifact.Label label) {
        PoolLayout.checkId("volume", volumeId);
        long size = blankSize(capacityBytes, access);
        return translate("creating volume " + volumeId, () -> layout.locked(volumeId, () -> {
            if (existing(volumeId, size, "", label)) return size;
            reserve(size, "volume " + volumeId);
            boolean made = false;
            try {
                layout.writeSidecarUnsynced(blank(volumeId, size, access, label));
                DataPath.CONFIGURED.createImage(image(volumeId), size);
                made = true;
            } finally {
                settle(size, made ? size : 0);
                if (!made) PoolLayout.deleteQuietly(layout.sidecar(Artifact.Kind.VOLUME, volumeId));
            }
            return size;
        }));
    }

    @Override
    void checkBlank(long sizeBytes, AccessType access) {
        checkCapacity(sizeBytes);
    }

    @Override
    boolean remakeBlank(String volumeId, long sizeBytes, AccessType access, Artifact.Label label) {
        if (!store.exists(Artifact.Kind.VOLUME, volumeId)) {
            layout.writeSidecarUnsynced(blank(volumeId, sizeBytes, access, label));
            DataPath.CONFIGURED.createImage(image(volumeId), sizeBytes);
            settle(0, sizeBytes);
            return true;
        }
        long current = fileSize(image(volumeId));
        if (current >= sizeBytes) return false;
        sized(image(volumeId), sizeBytes);   // a power cut kept the name but not the size
        settle(0, sizeBytes - current);
        return true;
    }

    /** An image's size is its length (an expansion changes the file first). */
    @Override
    long volumeSize(String volumeId, long recorded) {
        return fileSize(image(volumeId));
    }

    private void requireRoom(long bytes, String what) {
        PoolInfo info = pool();
        if (bytes > info.allocatableBytes()) {
            throw StorageException.noSpace(what + " needs " + bytes + " bytes; the pool can promise "
                    + info.allocatableBytes() + " more (total " + info.totalBytes() + ", available " + info.availableBytes()
                    + ", provisioned " + info.provisionedBytes() + ", overcommit " + options.overcommitRatio() + ")");
        }
    }

    private static void sized(Path file, long size) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
        } catch (IOException e) {
            throw new UncheckedIOException("sizing " + file, e);
        }
    }

    @Override
    public long restoreSnapshot(String volumeId, String snapshotId, long capacityBytes, AccessType access,
                                Artifact.Label label) {
        checkCapacity(capacityBytes);
        return fromSource(volumeId, Artifact.Kind.SNAPSHOT, snapshotId, () -> materialize(volumeId, snapshotImage(snapshotId),
                capacityBytes, access, Artifact.snapshotSource(snapshotId), List.of(), label));
    }

    @Override
    public long cloneVolume(String volumeId, String sourceVolumeId, long capacityBytes, AccessType access,
                            Artifact.Label label) {
        checkCapacity(capacityBytes);
        return fromSource(volumeId, Artifact.Kind.VOLUME, sourceVolumeId, () -> materialize(volumeId, image(sourceVolumeId),
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
        reserve(size, "volume " + volumeId);
        boolean made = false;
        Path temp = layout.temporary(volumeId, ".img");
        try {
            cut(freeze, () -> cloneOrCopy(source, temp));
            if (size > sourceSize) sized(temp, size);
            layout.reveal(List.of(new PoolLayout.Finished(
                    new Artifact(volumeId, Artifact.Kind.VOLUME, name(), size, access, sourceRef, Instant.now())
                            .withLabel(label), temp)));
            made = true;
        } finally {
            settle(size, made ? size : 0);
            PoolLayout.deleteQuietly(temp);
        }
        return size;
    }

    private void cloneOrCopy(Path source, Path target) {
        if (pool.reflink()) Reflink.clone(source, target); else SparseCopy.copy(source, target);
    }

    /**
     * Runs {@code work} with every mounted filesystem of these volumes frozen (thawed afterwards,
     * also when it fails). Attached but unmounted devices (block volumes) cannot be frozen; their
     * page cache is flushed into the image first, so what was written before the cut is in it.
     */
    private void cut(List<String> volumeIds, Runnable work) {
        Freeze.Frozen frozen = freezeMounted(volumeIds);
        if (frozen == null) {
            work.run();
            return;
        }
        try (frozen) {
            work.run();
        }
    }

    /** Freezes the mounted filesystems of these volumes (null when none is mounted); flushes attached block devices. */
    private Freeze.Frozen freezeMounted(List<String> volumeIds) {
        MountTable table = MountTable.read();
        Map<String, Path> mountPoints = new LinkedHashMap<>();
        for (String volumeId : volumeIds) {
            for (LoopDevice device : LoopDevice.findByCanonicalBackingFile(image(volumeId))) {
                List<MountInfo> mounts = table.mountsOf(device.node());
                if (mounts.isEmpty()) {
                    Durable.fsync(device.node());
                } else {
                    MountInfo m = mounts.getFirst();
                    mountPoints.putIfAbsent(m.major() + ":" + m.minor(), m.mountPoint());
                }
            }
        }
        if (mountPoints.isEmpty()) return null;
        try {
            return Freeze.freezeAll(mountPoints.values());
        } catch (OsException e) {
            // frozen already: another snapshot of one of these volumes is being cut right now
            if (e.is(Errno.EBUSY)) throw new StorageException(StorageException.Reason.BUSY, "freezing " + mountPoints.values() + ": busy; retry", e);
            throw e;
        }
    }

    @Override
    public FreezeHold holdFrozen(List<String> volumeIds) {
        List<String> ids = volumeIds.stream().map(id -> PoolLayout.checkId("volume", id)).toList();
        return translate("freezing " + ids, () -> {
            for (String volumeId : ids) {
                store.require(Artifact.Kind.VOLUME, volumeId);
            }
            return new FreezeHold(ids, freezeMounted(ids));
        });
    }

    @Override
    public void deleteVolume(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        run("deleting volume " + volumeId, () -> {
            // Check, measure and unlink under the id's lock: two deleters of one volume (DeleteVolume finishing
            // a DELETING row while DeleteVolumeGroup deletes its members) must converge, and only the call
            // that really removed the file may return its size to the pool.
            long freed = layout.locked(volumeId, () -> {
                long size = 0;
                if (layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
                    List<LoopDevice> attached = LoopDevice.findByCanonicalBackingFile(image(volumeId));
                    if (!attached.isEmpty()) {
                        throw StorageException.inUse("volume " + volumeId + " is attached as "
                                + attached.stream().map(d -> d.node().toString()).toList() + " (staged or published on this node)");
                    }
                    size = fileSize(image(volumeId));
                }
                layout.deleteUnsynced(Artifact.Kind.VOLUME, volumeId);  // durable by the caller's tombstone
                return size;
            });
            settle(0, -freed);
        });
    }

    @Override
    public boolean inUse(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("looking up volume " + volumeId, () -> !LoopDevice.findByCanonicalBackingFile(image(volumeId)).isEmpty());
    }

    @Override
    public List<Path> mountPoints(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("looking up mounts of volume " + volumeId, () -> {
            MountTable table = MountTable.read();
            var points = new java.util.TreeSet<Path>();
            for (LoopDevice device : LoopDevice.findByCanonicalBackingFile(image(volumeId))) {
                table.mountsOf(device.node()).forEach(m -> points.add(m.mountPoint()));
                Binds.bindsOf(table, device.node()).forEach(m -> points.add(m.mountPoint()));
            }
            return List.copyOf(points);
        });
    }

    @Override
    public long expandVolume(String volumeId, long newCapacityBytes) {
        PoolLayout.checkId("volume", volumeId);
        checkCapacity(newCapacityBytes);
        return translate("expanding volume " + volumeId, () -> {
            Path image = image(volumeId);
            // under the id's lock: a concurrent delete must not be undone by sized() re-creating the file
            long size = layout.locked(volumeId, () -> {
                store.require(Artifact.Kind.VOLUME, volumeId);
                long current = fileSize(image);
                long target = Math.ceilDiv(newCapacityBytes, MIB) * MIB;
                if (target <= current) return current;
                synchronized (provisioning) {
                    requireRoom(target - current, "growing volume " + volumeId + " by " + (target - current) + " bytes");
                    sized(image, target);
                    Durable.fsync(image);
                    provisionedBytes += target - current;
                }
                layout.readSidecar(Artifact.Kind.VOLUME, volumeId).ifPresent(a -> layout.writeSidecar(a.withSize(target)));
                return target;
            });
            LoopStaging.refreshAttached(image, size); // also converges a crash between growing the file and this
            return size;
        });
    }

    @Override
    public long createSnapshot(String snapshotId, String volumeId, Artifact.Label label) {
        PoolLayout.checkId("snapshot", snapshotId);
        PoolLayout.checkId("volume", volumeId);
        return createGroupSnapshot(Map.of(snapshotId, volumeId), label, null).get(snapshotId);
    }

    @Override
    Map<String, Long> snapshotGroup(Map<String, String> members, Artifact.Label label, FreezeHold held) {
        for (String volumeId : members.values()) {
            store.require(Artifact.Kind.VOLUME, volumeId);
        }
        Map<String, Long> done = completedSnapshots(members);
        if (done.size() == members.size()) {
            done.keySet().forEach(id -> store.relabel(Artifact.Kind.SNAPSHOT, id, label));
            return done;
        }
        // some but not all: left by an interrupted cut, not consistent with a new one; start over
        done.keySet().forEach(id -> layout.delete(Artifact.Kind.SNAPSHOT, id));
        return sourcesStayed(members.values(), () -> cutSnapshots(members, label, held));
    }

    /** Snapshots of {@code members} that exist already; EXISTS if one exists of another volume. */
    private Map<String, Long> completedSnapshots(Map<String, String> members) {
        Map<String, Long> done = new TreeMap<>();
        members.forEach((snapshotId, volumeId) -> {
            if (!layout.exists(Artifact.Kind.SNAPSHOT, snapshotId, EntryType.FILE)) return;
            String source = layout.readSidecar(Artifact.Kind.SNAPSHOT, snapshotId).map(Artifact::source).orElse("");
            if (!source.equals(Artifact.volumeSource(volumeId))) {
                throw StorageException.exists("snapshot " + snapshotId + " exists of " + source + ", not of volume " + volumeId);
            }
            done.put(snapshotId, fileSize(snapshotImage(snapshotId)));
        });
        return done;
    }

    private Map<String, Long> cutSnapshots(Map<String, String> members, Artifact.Label label, FreezeHold held) {
        Map<String, Path> temps = new LinkedHashMap<>();
        Map<String, Long> sizes = new TreeMap<>();
        List<PoolLayout.Finished> finished = new ArrayList<>();
        try {
            members.forEach((snapshotId, volumeId) -> {
                long size = fileSize(image(volumeId));
                AccessType access = layout.readSidecar(Artifact.Kind.VOLUME, volumeId).map(Artifact::access)
                        .orElse(AccessType.mount(""));
                Path temp = layout.temporary(snapshotId, ".img");
                temps.put(snapshotId, temp);
                finished.add(new PoolLayout.Finished(new Artifact(snapshotId, Artifact.Kind.SNAPSHOT, name(), size, access,
                        Artifact.volumeSource(volumeId), Instant.now()).withLabel(label), temp));
                sizes.put(snapshotId, size);
            });
            Runnable reflinkAll = () -> members.forEach((snapshotId, volumeId) -> cloneOrCopy(image(volumeId), temps.get(snapshotId)));
            if (held == null) cut(List.copyOf(members.values()), reflinkAll); else held.whileFrozen(members.values(), reflinkAll);
            layout.reveal(finished);  // after the thaw: syncing is no reason to keep a workload frozen
            return sizes;
        } catch (RuntimeException e) {
            deleteMembers(members.keySet(), e);
            throw e;
        } finally {
            temps.values().forEach(PoolLayout::deleteQuietly);
        }
    }

    // ---- space reclaim ----

    @Override
    public boolean reclaimsSpace() { return true; }

    @Override
    public long allocatedBytes(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("reading volume " + volumeId, () -> io.csi4j.driver.os.FileStat.of(requireVolume(volumeId)).allocatedBytes());
    }

    @Override
    public void trim(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        run("reclaiming free space of volume " + volumeId + " at " + volumePath,
                () -> staging.trim(volumeId, requireVolume(volumeId), volumePath));
    }

    /**
     * Reclaims the free space of a volume nobody uses (ControllerReclaimSpace): attaches its image to an
     * autoclear loop device, mounts the filesystem in a private mount namespace (no other process sees it),
     * trims it, unmounts. Under the volume's lock, so no stage starts meanwhile. A volume staged here is
     * trimmed where it is mounted instead; a blank one has nothing to give back. Block volumes are refused.
     */
    @Override
    public void trimOffline(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        run("reclaiming free space of volume " + volumeId, () -> layout.locked(volumeId, () -> {
            Path image = requireVolume(volumeId);
            List<Path> mounts = mountPoints(volumeId);
            if (!mounts.isEmpty()) {
                staging.trim(volumeId, image, mounts.getFirst());
                return null;
            }
            if (inUse(volumeId)) throw StorageException.inUse("volume " + volumeId + " is attached as a block device");
            io.csi4j.driver.os.PrivateMounts.run("csi4j-reclaim-" + volumeId, () -> trimPrivately(volumeId, image));
            return null;
        }));
    }

    private void trimPrivately(String volumeId, Path image) {
        // an empty directory in .tmp, which the start-up sweep clears should a crash leave it
        Path mountPoint = layout.temporary(volumeId, ".reclaim");
        try {
            Files.createDirectory(mountPoint, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                    java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + mountPoint, e);
        }
        try {
            trimAt(volumeId, image, mountPoint);
        } finally {
            try {
                Files.deleteIfExists(mountPoint);
            } catch (IOException e) {
                // left empty in .tmp: swept at the next start
            }
        }
    }

    private static void trimAt(String volumeId, Path image, Path mountPoint) {
        try (var loop = LoopDevice.attach(image, java.util.EnumSet.of(io.csi4j.driver.os.LoopFlag.AUTOCLEAR))) {
            var found = io.csi4j.driver.os.Tools.blkidType(loop.node());
            if (found.isEmpty()) return;   // never formatted: nothing allocated to give back
            String fsType = found.get();
            if (!FILESYSTEMS.contains(fsType)) {
                throw StorageException.inUse("volume " + volumeId + " holds " + fsType + ", not a filesystem of ours");
            }
            io.csi4j.driver.os.Mounts.mount(loop.node().toString(), mountPoint, fsType, java.util.Set.of(),
                    fsType.equals("xfs") ? "nouuid" : null);
            try {
                io.csi4j.driver.os.Trim.filesystem(mountPoint);
            } finally {
                io.csi4j.driver.os.Mounts.unmount(mountPoint);
            }
        }
    }

    // ---- moving volumes between nodes ----

    @Override
    public boolean movesData() { return true; }

    /** A snapshot's image as it is; a volume's cut now into .tmp (frozen if mounted), removed again at close. */
    @Override
    public SourceImage openSource(Artifact.Kind kind, String id) {
        PoolLayout.checkId(PoolLayout.kindName(kind), id);
        return translate("opening " + PoolLayout.kindName(kind) + " " + id + " to send", () -> {
            store.require(kind, id);
            if (kind == Artifact.Kind.SNAPSHOT) return new FileSourceImage(snapshotImage(id), false);
            Path cut = layout.temporary(id, ".send");
            try {
                cut(List.of(id), () -> cloneOrCopy(image(id), cut));
                return new FileSourceImage(cut, true);
            } catch (RuntimeException e) {
                PoolLayout.deleteQuietly(cut);
                throw e;
            }
        });
    }

    /**
     * A sparse temporary image of {@code sourceBytes} (a reflink of the replica of {@code baseSnapshotId} when given,
     * cut to that size), its final size promised to the pool now. Commit syncs it, keeps it as the replica of
     * {@code keepAs} (when given: the snapshot it now holds, replacing older replicas of that source volume), grows
     * it to {@code capacityBytes} and reveals it.
     */
    @Override
    public ImageImport beginImport(String volumeId, long sourceBytes, long capacityBytes, AccessType access, String sourceRef,
                                   Artifact.Label label, Replica base, Replica keepAs) {
        PoolLayout.checkId("volume", volumeId);
        checkCapacity(capacityBytes);
        long size = capacityBytes == 0 ? sourceBytes : Math.max(Math.ceilDiv(capacityBytes, MIB) * MIB, sourceBytes);
        if (capacityBytes != 0 && capacityBytes < sourceBytes) {
            throw StorageException.outOfRange(sourceRef + " holds " + sourceBytes + " bytes; " + capacityBytes + " cannot hold it");
        }
        String what = "volume " + volumeId + " (a copy of " + sourceRef + ")";
        reserve(size, "volume " + volumeId);
        Path temp = layout.temporary(volumeId, ".img");
        try {
            translate("starting " + what, () -> {
                if (base != null) {
                    Reflink.clone(replicaFile(base), temp);
                    sized(temp, sourceBytes);
                } else {
                    SparseFile.create(temp, sourceBytes);
                }
                return null;
            });
        } catch (RuntimeException e) {
            settle(size, 0);
            PoolLayout.deleteQuietly(temp);
            throw e;
        }
        return new FileImageImport(temp, what, t -> {
            Durable.fsync(t);
            if (keepAs != null && pool.reflink()) keepReplica(t, keepAs);
            if (size > sourceBytes) sized(t, size);
            layout.reveal(List.of(new PoolLayout.Finished(new Artifact(volumeId, Artifact.Kind.VOLUME, name(), size, access,
                    sourceRef, Instant.now()).withLabel(label), t)));
            return size;
        }, provisioned -> settle(size, provisioned));
    }

    /** The replicas this pool keeps (source volume id -> snapshot id); none where the pool cannot reflink. */
    @Override
    public List<Replica> replicas() {
        return translate("listing replicas", layout::replicas);
    }

    private Path replicaFile(Replica replica) {
        return layout.replica(replica.sourceVolumeId(), replica.snapshotId());
    }

    /** A durable reflink of {@code image} under the replica's name; older replicas of that source volume go. */
    private void keepReplica(Path image, Replica keep) {
        Path temp = layout.temporary(keep.snapshotId(), ".replica");
        try {
            Reflink.clone(image, temp);
            layout.commitReplica(temp, keep);
            layout.dropReplicas(keep.sourceVolumeId(), keep.snapshotId());
        } finally {
            PoolLayout.deleteQuietly(temp);
        }
    }

    // ---- snapshot metadata ----

    @Override
    public boolean mapsSnapshotBlocks() { return true; }

    @Override
    public RangeCursor allocatedRanges(String snapshotId, long from, java.util.function.BooleanSupplier cancelled) {
        ExtentFile image = openSnapshot(snapshotId);
        try {
            checkOffset(from, image.size());
            return new AllocatedRanges(image, from, cancelled);
        } catch (RuntimeException e) {
            image.close();
            throw e;
        }
    }

    /**
     * From physical extents where the pool reflinks (every snapshot of a volume was cut by FICLONE of its one
     * image), else by comparing data; the cursor says which ({@link RangeCursor#method}).
     */
    @Override
    public RangeCursor changedRanges(String baseSnapshotId, String targetSnapshotId, long from,
                                     java.util.function.BooleanSupplier cancelled) {
        ExtentFile base = openSnapshot(baseSnapshotId);
        ExtentFile target = null;
        try {
            target = openSnapshot(targetSnapshotId);
            checkOffset(from, target.size());
            ExtentFile t = target;
            boolean shared = pool.reflink() && translate("mapping " + t.path(), () -> base.mapsExtents() && t.mapsExtents());
            return shared ? new SharedExtentDelta(base, target, from, cancelled)
                    : new DataComparisonDelta(base, target, from, translate("reading " + pool.path(),
                            () -> Math.max(512, t.blockSize())), cancelled);
        } catch (RuntimeException e) {
            base.close();
            if (target != null) target.close();
            throw e;
        }
    }

    private ExtentFile openSnapshot(String snapshotId) {
        PoolLayout.checkId("snapshot", snapshotId);
        return translate("opening snapshot " + snapshotId, () -> {
            if (!layout.exists(Artifact.Kind.SNAPSHOT, snapshotId, EntryType.FILE)) {
                throw StorageException.notFound("snapshot " + snapshotId + " has no image in the pool");
            }
            return ExtentFile.open(snapshotImage(snapshotId));
        });
    }

    /** A resume offset may be the capacity itself (everything was sent), not beyond it. */
    private static void checkOffset(long from, long capacity) {
        if (from < 0 || from > capacity) {
            throw StorageException.outOfRange("starting_offset " + from + " is outside the snapshot's volume of "
                    + capacity + " bytes");
        }
    }

    @Override
    public void modifyVolume(String volumeId, Map<String, String> mutableParameters) {
        PoolLayout.checkId("volume", volumeId);
        MutableParameters parameters = mutableParameters(mutableParameters);
        run("modifying volume " + volumeId, () -> {
            store.require(Artifact.Kind.VOLUME, volumeId);
            Path image = image(volumeId);
            parameters.readAheadKiB().ifPresent(kib -> {
                for (LoopDevice device : LoopDevice.findByBackingFile(image)) LoopStaging.applyReadAhead(device.node(), kib);
            });
            parameters.compression().ifPresent(c -> MutableParameters.setBtrfsCompression(image, c));
        });
    }

    @Override
    public Optional<String> volumeCondition(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("checking volume " + volumeId, () -> {
            if (!layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
                return Optional.of("volume image " + image(volumeId) + " is missing");
            }
            MountTable table = MountTable.read();
            for (LoopDevice device : LoopDevice.findByCanonicalBackingFile(image(volumeId))) {
                Optional<String> readOnly = LoopStaging.readOnlyAfterErrors(table, table.mountsOf(device.node()));
                if (readOnly.isPresent()) return readOnly;
            }
            return Optional.empty();
        });
    }

    @Override
    public Map<String, Optional<String>> volumeConditions(List<String> volumeIds) {
        return translate("checking " + volumeIds.size() + " volumes", () -> {
            Set<String> present = layout.present(Artifact.Kind.VOLUME, volumeIds, EntryType.FILE);
            MountTable table = null;
            Map<String, List<LoopDevice>> attached = null;  // by image file name: no Path made per listed volume
            Path images = layout.dir(Artifact.Kind.VOLUME);
            Map<String, Optional<String>> conditions = new java.util.HashMap<>();
            for (String volumeId : volumeIds) {
                if (!present.contains(volumeId)) {
                    conditions.put(volumeId, Optional.of("volume image " + images.resolve(volumeId + ".img") + " is missing"));
                    continue;
                }
                if (attached == null) {  // once per page: the mount table and every bound loop device
                    table = MountTable.read();
                    attached = new java.util.HashMap<>();
                    for (LoopDevice d : LoopDevice.listWithCapacity()) {  // images are never empty
                        Path file = d.backingFile();
                        if (!d.backingFileDeleted() && images.equals(file.getParent())) {
                            attached.computeIfAbsent(file.getFileName().toString(), f -> new ArrayList<>()).add(d);
                        }
                    }
                }
                Optional<String> condition = Optional.empty();
                List<LoopDevice> devices = attached.isEmpty() ? List.of() : attached.getOrDefault(volumeId + ".img", List.of());
                for (LoopDevice device : devices) {
                    condition = LoopStaging.readOnlyAfterErrors(table, table.mountsOf(device.node()));
                    if (condition.isPresent()) break;
                }
                conditions.put(volumeId, condition);
            }
            return conditions;
        });
    }

    /** The sidecar's description with the image's size now (an expansion changes the file first). */
    @Override
    public Optional<Artifact> artifact(Artifact.Kind kind, String id) {
        return store.sidecar(kind, id).map(a -> translate("reading " + id, () -> a.withSize(fileSize(layout.artifact(kind, id)))));
    }

    @Override
    public List<Path> removeTemporaryArtifacts() {
        List<Path> removed = new ArrayList<>(super.removeTemporaryArtifacts());
        removed.addAll(translate("thawing volumes left frozen", this::thawLeftFrozen));
        return removed;
    }

    /**
     * A process killed while it held a snapshot's freeze leaves the filesystem frozen: the kernel
     * keeps the freeze, every write of the workload hangs and every later freeze is EBUSY. At
     * start-up no cut is in flight, so each of our mounted volumes is thawed (a no-op if not frozen).
     */
    private List<Path> thawLeftFrozen() {
        List<Path> thawed = new ArrayList<>();
        MountTable table = MountTable.read();
        for (String volumeId : layout.ids(Artifact.Kind.VOLUME)) {
            for (LoopDevice device : LoopDevice.findByCanonicalBackingFile(image(volumeId))) {
                for (MountInfo m : table.mountsOf(device.node())) {
                    if (Freeze.thaw(m.mountPoint())) thawed.add(m.mountPoint());
                }
            }
        }
        return thawed;
    }

    // ---- node side ----

    @Override
    public void stage(String volumeId, Path stagingPath, StageOptions stageOptions) {
        PoolLayout.checkId("volume", volumeId);
        run("staging volume " + volumeId + " at " + stagingPath, () -> {
            Path image = requireVolume(volumeId);
            // made without a sync at create (derivable from its row while blank): durable before anything is written in
            layout.syncArtifact(Artifact.Kind.VOLUME, volumeId);
            StageOptions resolved = stageOptions;
            if (stageOptions instanceof StageOptions.Mount(String fs, List<String> flags, long readAhead) && fs.isEmpty()) {
                // no fsType in the capability: the one recorded at creation, else the default
                String recorded = layout.readSidecar(Artifact.Kind.VOLUME, volumeId)
                        .map(a -> a.access() instanceof AccessType.Mount(String f) ? f : "").orElse("");
                resolved = new StageOptions.Mount(recorded, flags, readAhead);
            }
            StageOptions options = resolved;
            // under the volume's lock: an offline reclaim holds the image attached where the mount table cannot show it
            layout.locked(volumeId, () -> {
                staging.stage(volumeId, image, stagingPath, options);
                return null;
            });
        });
    }

    @Override
    public void unstage(String volumeId, Path stagingPath) {
        PoolLayout.checkId("volume", volumeId);
        run("unstaging volume " + volumeId + " from " + stagingPath, () -> staging.unstage(volumeId, image(volumeId), stagingPath));
    }

    @Override
    public void publish(String volumeId, Path stagingPath, Path targetPath, PublishOptions publishOptions) {
        PoolLayout.checkId("volume", volumeId);
        run("publishing volume " + volumeId + " at " + targetPath,
                () -> staging.publish(volumeId, requireVolume(volumeId), stagingPath, targetPath, publishOptions));
    }

    @Override
    public void unpublish(String volumeId, Path targetPath) {
        PoolLayout.checkId("volume", volumeId);
        run("unpublishing volume " + volumeId + " from " + targetPath, () -> staging.unpublish(volumeId, image(volumeId), targetPath));
    }

    @Override
    public VolumeStats stats(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        return translate("stats of volume " + volumeId + " at " + volumePath,
                () -> staging.stats(volumeId, image(volumeId), volumePath));
    }

    @Override
    public long nodeExpand(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        return translate("growing the filesystem of volume " + volumeId + " at " + volumePath,
                () -> staging.nodeExpand(volumeId, requireVolume(volumeId), volumePath));
    }

    @Override
    public void close() {
        // nothing held: the kernel keeps mounts and loop devices, and the next start reads them back
    }
}
