package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.os.AttachedLoop;
import io.csi4j.driver.os.BlockDevice;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.Fallocate;
import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.Freeze;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.LoopFlag;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.SparseCopy;
import io.csi4j.driver.os.ToolException;
import io.csi4j.driver.os.Tools;
import io.csi4j.sdk.CsiException;
import io.grpc.Status;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
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
public final class ImageEngine implements StorageEngine {

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
            return new Options(1.0, false);
        }
    }

    static final long MIB = 1L << 20;
    /** mkfs.xfs (xfsprogs >= 5.19) refuses filesystems under 300 MiB. */
    static final long XFS_MINIMUM = 300 * MIB;
    static final long EXT4_MINIMUM = 16 * MIB;
    static final Set<String> FILESYSTEMS = Set.of("ext4", "xfs");
    static final String DEFAULT_FS = "ext4";
    static final long MAX_READ_AHEAD_KIB = 65536;
    /** What the kernel gives a loop device; a read-ahead of 0 from the caller means "back to this". */
    static final long DEFAULT_READ_AHEAD_KIB = 128;

    private final Pool pool;
    private final PoolLayout layout;
    private final Options options;
    private final Object provisioning = new Object();

    private ImageEngine(Pool pool, Options options) {
        this.pool = pool;
        this.options = options;
        this.layout = PoolLayout.open(pool.path(), ".img");
    }

    public static ImageEngine open(Pool pool, Options options) {
        return new ImageEngine(pool, options);
    }

    @Override
    public String name() { return "image"; }

    @Override
    public boolean supportsBlock() { return true; }

    @Override
    public PoolInfo pool() {
        return translate("reading pool " + pool.path(), () -> {
            FsStats stats = pool.stats();
            return new PoolInfo(pool.path(), stats.type(), pool.reflink(), stats.totalBytes(), stats.availableBytes(),
                    provisionedBytes(), options.overcommitRatio());
        });
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

    private long provisionedBytes() {
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

    /** Rounds up to whole MiB and to the filesystem's minimum size. */
    static long roundUp(long bytes, AccessType access) {
        long minimum = switch (access) {
            case AccessType.Block b -> MIB;
            case AccessType.Mount m -> fsType(m.fsType()).equals("xfs") ? XFS_MINIMUM : EXT4_MINIMUM;
        };
        long rounded = Math.ceilDiv(Math.max(bytes, 1), MIB) * MIB;
        return Math.max(rounded, minimum);
    }

    /** "" means ext4; anything but ext4 or xfs is INVALID_ARGUMENT. */
    static String fsType(String requested) {
        String fs = requested == null || requested.isEmpty() ? DEFAULT_FS : requested;
        if (!FILESYSTEMS.contains(fs)) {
            throw CsiException.invalidArgument("filesystem \"" + fs + "\" is not supported; supported: ext4 (default), xfs");
        }
        return fs;
    }

    private static void checkCapacity(long capacityBytes) {
        if (capacityBytes < 0) throw CsiException.invalidArgument("negative capacity: " + capacityBytes);
    }

    private Path image(String volumeId) {
        return layout.artifact(Artifact.Kind.VOLUME, volumeId);
    }

    private Path snapshotImage(String snapshotId) {
        return layout.artifact(Artifact.Kind.SNAPSHOT, snapshotId);
    }

    @Override
    public long createVolume(String volumeId, long capacityBytes, AccessType access) {
        PoolLayout.checkId("volume", volumeId);
        checkCapacity(capacityBytes);
        long size = roundUp(capacityBytes, access);
        return translate("creating volume " + volumeId, () -> {
            if (existing(volumeId, size, "")) return size;
            synchronized (provisioning) {
                requireRoom(size, "volume " + volumeId);
                layout.writeSidecar(new Artifact(volumeId, Artifact.Kind.VOLUME, name(), size, access, "", Instant.now()));
                Path temp = layout.temporary(volumeId, ".img");
                try {
                    sized(temp, size);
                    layout.commit(temp, Artifact.Kind.VOLUME, volumeId);
                } finally {
                    PoolLayout.deleteQuietly(temp);
                }
            }
            return size;
        });
    }

    /** True when the volume exists already as asked; ALREADY_EXISTS when it exists otherwise. */
    private boolean existing(String volumeId, long size, String source) {
        if (!layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) return false;
        long existingSize = fileSize(image(volumeId));
        String existingSource = layout.readSidecar(Artifact.Kind.VOLUME, volumeId).map(Artifact::source).orElse(source);
        if (existingSize == size && existingSource.equals(source)) return true;
        throw CsiException.alreadyExists("volume " + volumeId + " exists with " + existingSize + " bytes"
                + (existingSource.isEmpty() ? "" : " from " + existingSource) + ", not " + size + " bytes"
                + (source.isEmpty() ? "" : " from " + source));
    }

    private void requireRoom(long bytes, String what) {
        PoolInfo info = pool();
        if (bytes > info.allocatableBytes()) {
            throw CsiException.resourceExhausted(what + " needs " + bytes + " bytes; the pool can promise "
                    + info.allocatableBytes() + " more (total " + info.totalBytes() + ", available " + info.availableBytes()
                    + ", provisioned " + info.provisionedBytes() + ", overcommit " + info.overcommitRatio() + ")");
        }
    }

    private static void sized(Path file, long size) {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
        } catch (IOException e) {
            throw new UncheckedIOException("sizing " + file, e);
        }
    }

    private static long fileSize(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException("size of " + file, e);
        }
    }

    @Override
    public long restoreSnapshot(String volumeId, String snapshotId, long capacityBytes, AccessType access) {
        PoolLayout.checkId("volume", volumeId);
        PoolLayout.checkId("snapshot", snapshotId);
        checkCapacity(capacityBytes);
        return translate("restoring snapshot " + snapshotId + " into volume " + volumeId, () -> {
            if (!layout.exists(Artifact.Kind.SNAPSHOT, snapshotId, EntryType.FILE)) {
                throw CsiException.notFound("snapshot " + snapshotId + " does not exist");
            }
            return materialize(volumeId, snapshotImage(snapshotId), capacityBytes, access,
                    Artifact.snapshotSource(snapshotId), List.of());
        });
    }

    @Override
    public long cloneVolume(String volumeId, String sourceVolumeId, long capacityBytes, AccessType access) {
        PoolLayout.checkId("volume", volumeId);
        PoolLayout.checkId("source volume", sourceVolumeId);
        checkCapacity(capacityBytes);
        return translate("cloning volume " + sourceVolumeId + " into " + volumeId, () -> {
            if (!layout.exists(Artifact.Kind.VOLUME, sourceVolumeId, EntryType.FILE)) {
                throw CsiException.notFound("source volume " + sourceVolumeId + " does not exist");
            }
            return materialize(volumeId, image(sourceVolumeId), capacityBytes, access,
                    Artifact.volumeSource(sourceVolumeId), List.of(sourceVolumeId));
        });
    }

    /** A new volume from {@code source}'s content, cut while {@code freeze}'s filesystems are frozen. */
    private long materialize(String volumeId, Path source, long capacityBytes, AccessType access, String sourceRef,
                             List<String> freeze) {
        long sourceSize = fileSize(source);
        long size = capacityBytes == 0 ? sourceSize : Math.max(Math.ceilDiv(capacityBytes, MIB) * MIB, sourceSize);
        if (capacityBytes != 0 && capacityBytes < sourceSize) {
            throw CsiException.outOfRange(sourceRef + " holds " + sourceSize + " bytes; " + capacityBytes + " cannot hold it");
        }
        if (existing(volumeId, size, sourceRef)) return size;
        synchronized (provisioning) {
            requireRoom(size, "volume " + volumeId);
            layout.writeSidecar(new Artifact(volumeId, Artifact.Kind.VOLUME, name(), size, access, sourceRef, Instant.now()));
        }
        Path temp = layout.temporary(volumeId, ".img");
        try {
            cut(freeze, () -> cloneOrCopy(source, temp));
            if (size > sourceSize) sized(temp, size);
            layout.commit(temp, Artifact.Kind.VOLUME, volumeId);
        } finally {
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
        MountTable table = MountTable.read();
        Map<String, Path> mountPoints = new LinkedHashMap<>();
        for (String volumeId : volumeIds) {
            for (LoopDevice device : LoopDevice.findByBackingFile(image(volumeId))) {
                List<MountInfo> mounts = table.mountsOf(device.node());
                if (mounts.isEmpty()) {
                    Durable.fsync(device.node());
                } else {
                    MountInfo m = mounts.getFirst();
                    mountPoints.putIfAbsent(m.major() + ":" + m.minor(), m.mountPoint());
                }
            }
        }
        if (mountPoints.isEmpty()) {
            work.run();
            return;
        }
        try (Freeze.Frozen frozen = Freeze.freezeAll(mountPoints.values())) {
            work.run();
        }
    }

    @Override
    public void deleteVolume(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        run("deleting volume " + volumeId, () -> {
            if (layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
                List<LoopDevice> attached = LoopDevice.findByBackingFile(image(volumeId));
                if (!attached.isEmpty()) {
                    throw CsiException.failedPrecondition("volume " + volumeId + " is attached as "
                            + attached.stream().map(d -> d.node().toString()).toList() + " (staged or published on this node)");
                }
            }
            layout.delete(Artifact.Kind.VOLUME, volumeId);
        });
    }

    @Override
    public boolean volumeExists(String volumeId) {
        return translate("looking up volume " + volumeId, () -> layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE));
    }

    @Override
    public boolean inUse(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("looking up volume " + volumeId, () -> !LoopDevice.findByBackingFile(image(volumeId)).isEmpty());
    }

    @Override
    public List<Path> mountPoints(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("looking up mounts of volume " + volumeId, () -> {
            MountTable table = MountTable.read();
            var points = new java.util.TreeSet<Path>();
            for (LoopDevice device : LoopDevice.findByBackingFile(image(volumeId))) {
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
            if (!layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
                throw CsiException.notFound("volume " + volumeId + " does not exist");
            }
            Path image = image(volumeId);
            long current = fileSize(image);
            long target = Math.ceilDiv(newCapacityBytes, MIB) * MIB;
            if (target <= current) {
                refreshAttached(image, current); // a crash after growing the file but before this: converge
                return current;
            }
            synchronized (provisioning) {
                requireRoom(target - current, "growing volume " + volumeId + " by " + (target - current) + " bytes");
                sized(image, target);
                Durable.fsync(image);
            }
            layout.readSidecar(Artifact.Kind.VOLUME, volumeId).ifPresent(a -> layout.writeSidecar(a.withSize(target)));
            refreshAttached(image, target);
            return target;
        });
    }

    private static void refreshAttached(Path image, long size) {
        for (LoopDevice device : LoopDevice.findByBackingFile(image)) {
            if (device.size() != size) device.refreshCapacity();
        }
    }

    @Override
    public long createSnapshot(String snapshotId, String volumeId) {
        PoolLayout.checkId("snapshot", snapshotId);
        PoolLayout.checkId("volume", volumeId);
        return createGroupSnapshot(Map.of(snapshotId, volumeId)).get(snapshotId);
    }

    @Override
    public Map<String, Long> createGroupSnapshot(Map<String, String> snapshotToVolume) {
        if (snapshotToVolume.isEmpty()) throw CsiException.invalidArgument("no volumes to snapshot");
        Map<String, String> members = new TreeMap<>();
        snapshotToVolume.forEach((snap, vol) -> members.put(PoolLayout.checkId("snapshot", snap), PoolLayout.checkId("volume", vol)));
        return translate("snapshotting " + members, () -> {
            for (String volumeId : members.values()) {
                if (!layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
                    throw CsiException.notFound("volume " + volumeId + " does not exist");
                }
            }
            Map<String, Long> done = completedSnapshots(members);
            if (done.size() == members.size()) return done;
            // some but not all: left by an interrupted cut, not consistent with a new one; start over
            done.keySet().forEach(id -> layout.delete(Artifact.Kind.SNAPSHOT, id));
            return cutSnapshots(members);
        });
    }

    /** Snapshots of {@code members} that exist already; ALREADY_EXISTS if one exists of another volume. */
    private Map<String, Long> completedSnapshots(Map<String, String> members) {
        Map<String, Long> done = new TreeMap<>();
        members.forEach((snapshotId, volumeId) -> {
            if (!layout.exists(Artifact.Kind.SNAPSHOT, snapshotId, EntryType.FILE)) return;
            String source = layout.readSidecar(Artifact.Kind.SNAPSHOT, snapshotId).map(Artifact::source).orElse("");
            if (!source.equals(Artifact.volumeSource(volumeId))) {
                throw CsiException.alreadyExists("snapshot " + snapshotId + " exists of " + source + ", not of volume " + volumeId);
            }
            done.put(snapshotId, fileSize(snapshotImage(snapshotId)));
        });
        return done;
    }

    private Map<String, Long> cutSnapshots(Map<String, String> members) {
        Map<String, Path> temps = new LinkedHashMap<>();
        Map<String, Long> sizes = new TreeMap<>();
        List<String> committed = new ArrayList<>();
        try {
            members.forEach((snapshotId, volumeId) -> {
                long size = fileSize(image(volumeId));
                AccessType access = layout.readSidecar(Artifact.Kind.VOLUME, volumeId).map(Artifact::access)
                        .orElse(AccessType.mount(""));
                layout.writeSidecar(new Artifact(snapshotId, Artifact.Kind.SNAPSHOT, name(), size, access,
                        Artifact.volumeSource(volumeId), Instant.now()));
                temps.put(snapshotId, layout.temporary(snapshotId, ".img"));
                sizes.put(snapshotId, size);
            });
            cut(List.copyOf(members.values()), () -> members.forEach((snapshotId, volumeId) ->
                    cloneOrCopy(image(volumeId), temps.get(snapshotId))));
            for (Map.Entry<String, Path> t : temps.entrySet()) {
                layout.commit(t.getValue(), Artifact.Kind.SNAPSHOT, t.getKey());
                committed.add(t.getKey());
            }
            return sizes;
        } catch (RuntimeException e) {
            for (String snapshotId : members.keySet()) {
                try {
                    layout.delete(Artifact.Kind.SNAPSHOT, snapshotId); // sidecars too, committed or not
                } catch (RuntimeException undo) {
                    e.addSuppressed(undo);
                }
            }
            throw e;
        } finally {
            temps.values().forEach(PoolLayout::deleteQuietly);
        }
    }

    @Override
    public void deleteSnapshot(String snapshotId) {
        PoolLayout.checkId("snapshot", snapshotId);
        run("deleting snapshot " + snapshotId, () -> {
            layout.exists(Artifact.Kind.SNAPSHOT, snapshotId, EntryType.FILE); // refuses a symlink there
            layout.delete(Artifact.Kind.SNAPSHOT, snapshotId);
        });
    }

    @Override
    public boolean snapshotExists(String snapshotId) {
        return translate("looking up snapshot " + snapshotId,
                () -> layout.exists(Artifact.Kind.SNAPSHOT, snapshotId, EntryType.FILE));
    }

    @Override
    public void modifyVolume(String volumeId, Map<String, String> mutableParameters) {
        PoolLayout.checkId("volume", volumeId);
        MutableParameters parameters = MutableParameters.parse(mutableParameters, Set.of("readAheadKiB", "compression"));
        parameters.compression().ifPresent(c -> {
            if (!pool.filesystem().equals("btrfs")) {
                throw CsiException.invalidArgument("compression needs a btrfs pool; this pool is " + pool.filesystem());
            }
        });
        run("modifying volume " + volumeId, () -> {
            if (!layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
                throw CsiException.notFound("volume " + volumeId + " does not exist");
            }
            Path image = image(volumeId);
            parameters.readAheadKiB().ifPresent(kib -> {
                for (LoopDevice device : LoopDevice.findByBackingFile(image)) applyReadAhead(device.node(), kib);
            });
            parameters.compression().ifPresent(c -> MutableParameters.setBtrfsCompression(image, c));
        });
    }

    private static void applyReadAhead(Path node, long kib) {
        BlockDevice.setReadAheadSectors(node, (kib == 0 ? DEFAULT_READ_AHEAD_KIB : kib) * 2);
    }

    @Override
    public Optional<String> volumeCondition(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("checking volume " + volumeId, () -> {
            if (!layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
                return Optional.of("volume image " + image(volumeId) + " is missing");
            }
            MountTable table = MountTable.read();
            for (LoopDevice device : LoopDevice.findByBackingFile(image(volumeId))) {
                Optional<String> readOnly = readOnlyAfterErrors(table, table.mountsOf(device.node()));
                if (readOnly.isPresent()) return readOnly;
            }
            return Optional.empty();
        });
    }

    /**
     * A filesystem the kernel turned read-only (errors=remount-ro): its superblock is read-only
     * although no mount of it asked for that (a read-only stage makes its mounts read-only too).
     */
    private static Optional<String> readOnlyAfterErrors(MountTable table, List<MountInfo> mounts) {
        if (mounts.isEmpty()) return Optional.empty();
        List<String> superOptions = mounts.getFirst().superOptions();
        // ext4 shows an error remount as "emergency_ro" (Linux >= 6.x), older kernels and others as "ro"
        boolean superReadOnly = superOptions.contains("ro") || superOptions.contains("emergency_ro");
        boolean asked = mounts.stream().anyMatch(MountInfo::readOnly);
        if (superReadOnly && !asked) {
            return Optional.of("filesystem " + mounts.getFirst().source() + " at " + mounts.getFirst().mountPoint()
                    + " is read-only although mounted read-write (the kernel remounted it after an error)");
        }
        return Optional.empty();
    }

    @Override
    public Set<String> volumeArtifacts() {
        return translate("listing volumes", () -> layout.ids(Artifact.Kind.VOLUME));
    }

    @Override
    public Set<String> snapshotArtifacts() {
        return translate("listing snapshots", () -> layout.ids(Artifact.Kind.SNAPSHOT));
    }

    @Override
    public Optional<Artifact> artifact(Artifact.Kind kind, String id) {
        PoolLayout.checkId(PoolLayout.label(kind), id);
        return translate("reading " + id, () -> layout.exists(kind, id, EntryType.FILE)
                ? layout.readSidecar(kind, id).map(a -> a.withSize(fileSize(layout.artifact(kind, id))))
                : Optional.empty());
    }

    @Override
    public List<Path> removeTemporaryArtifacts() {
        return translate("sweeping " + layout.tmpDir(), layout::sweep);
    }

    // ---- node side ----

    private Path requireImage(String volumeId) {
        if (!layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.FILE)) {
            throw CsiException.notFound("volume " + volumeId + " does not exist");
        }
        return image(volumeId);
    }

    private Set<LoopFlag> loopFlags(boolean autoclear) {
        Set<LoopFlag> flags = EnumSet.noneOf(LoopFlag.class);
        if (autoclear) flags.add(LoopFlag.AUTOCLEAR);
        if (options.directIo()) flags.add(LoopFlag.DIRECT_IO);
        return flags;
    }

    @Override
    public void stage(String volumeId, Path stagingPath, StageOptions stageOptions) {
        PoolLayout.checkId("volume", volumeId);
        run("staging volume " + volumeId + " at " + stagingPath, () -> {
            Path image = requireImage(volumeId);
            switch (stageOptions) {
                case StageOptions.Block block -> stageBlock(volumeId, image, block);
                case StageOptions.Mount mount -> stageMount(volumeId, image, stagingPath, mount);
            }
        });
    }

    private void stageBlock(String volumeId, Path image, StageOptions.Block block) {
        MountTable table = MountTable.read();
        List<LoopDevice> devices = LoopDevice.findByBackingFile(image).stream().filter(d -> !d.readOnly()).toList();
        for (LoopDevice d : devices) {
            if (!table.mountsOf(d.node()).isEmpty()) {
                throw CsiException.failedPrecondition("volume " + volumeId + " is staged as a filesystem at "
                        + table.mountsOf(d.node()).getFirst().mountPoint());
            }
        }
        Path node;
        if (devices.isEmpty()) {
            // no autoclear: nothing holds a raw block volume open between uses
            try (AttachedLoop loop = LoopDevice.attach(image, loopFlags(false))) {
                node = loop.node();
            }
        } else {
            node = devices.getFirst().node();
        }
        if (block.readAheadKiB() > 0) applyReadAhead(node, checkReadAhead(block.readAheadKiB()));
    }

    private static long checkReadAhead(long kib) {
        if (kib < 0 || kib > MAX_READ_AHEAD_KIB) {
            throw CsiException.invalidArgument("readAheadKiB must be 0.." + MAX_READ_AHEAD_KIB + ", not " + kib);
        }
        return kib;
    }

    private void stageMount(String volumeId, Path image, Path stagingPath, StageOptions.Mount mount) {
        String recorded = layout.readSidecar(Artifact.Kind.VOLUME, volumeId)
                .map(a -> a.access() instanceof AccessType.Mount(String fs) ? fs : "").orElse("");
        String fsType = fsType(mount.fsType().isEmpty() ? recorded : mount.fsType());
        MountOptions mountOptions = MountOptions.parse(mount.mountFlags());
        long readAhead = checkReadAhead(mount.readAheadKiB());
        try {
            Files.createDirectories(stagingPath);
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + stagingPath, e);
        }
        MountTable table = MountTable.read();
        Optional<MountInfo> there = table.at(stagingPath);
        if (there.isPresent()) {
            if (!Binds.isLoopOf(there.get(), image)) {
                throw CsiException.alreadyExists(stagingPath + " already has " + there.get().source() + " mounted, not volume " + volumeId);
            }
            if (!there.get().fsType().equals(fsType)) {
                throw CsiException.alreadyExists("volume " + volumeId + " is staged at " + stagingPath + " as "
                        + there.get().fsType() + ", not " + fsType);
            }
            if (readAhead > 0) applyReadAhead(Path.of(there.get().source()), readAhead);
            return;
        }
        List<LoopDevice> devices = LoopDevice.findByBackingFile(image);
        for (LoopDevice d : devices) {
            List<MountInfo> mounts = table.mountsOf(d.node());
            if (!mounts.isEmpty()) {
                throw CsiException.failedPrecondition("volume " + volumeId + " is already staged at " + mounts.getFirst().mountPoint());
            }
            if (d.readOnly() || Binds.bindsOf(table, d.node()).size() > 0) {
                throw CsiException.failedPrecondition("volume " + volumeId + " is in use as a block device (" + d.node() + ")");
            }
        }
        // a device left from an earlier attempt (not autoclear) is reused; else a new one that the mount will hold
        Optional<LoopDevice> leftover = devices.stream().findFirst();
        try (AttachedLoop loop = leftover.isEmpty() ? LoopDevice.attach(image, loopFlags(true)) : null) {
            Path node = loop != null ? loop.node() : leftover.get().node();
            prepareFilesystem(volumeId, image, node, fsType, mountOptions.readOnly());
            Mounts.mount(node.toString(), stagingPath, fsType, mountOptions.flags(), mountData(fsType, mountOptions));
            if (readAhead > 0) applyReadAhead(node, readAhead);
        }
        if (fsType.equals("xfs") && !mountOptions.readOnly()) Tools.xfsGrowfs(stagingPath); // no-op unless the image grew
    }

    /**
     * Restores and clones carry the source's XFS UUID, and XFS refuses to mount a second filesystem
     * with a UUID already mounted: always mount XFS volumes with {@code nouuid}.
     */
    static String mountData(String fsType, MountOptions options) {
        List<String> data = new ArrayList<>(options.data());
        if (fsType.equals("xfs") && !data.contains("nouuid")) data.add("nouuid");
        return data.isEmpty() ? null : String.join(",", data);
    }

    /**
     * Formats a blank volume; refuses one holding another filesystem, or data without one (never
     * format over bytes). An ext4 smaller than its device (restored or expanded while unstaged) is
     * grown offline here, which needs no CAP_SYS_RESOURCE, unlike an online resize.
     */
    private static void prepareFilesystem(String volumeId, Path image, Path node, String fsType, boolean readOnly) {
        Optional<String> found = Tools.blkidType(node);
        if (found.isEmpty()) {
            if (Fallocate.allocatedBytes(image) != 0) {
                throw CsiException.failedPrecondition("volume " + volumeId + " holds data but no filesystem blkid knows;"
                        + " refusing to format it as " + fsType);
            }
            if (readOnly) throw CsiException.failedPrecondition("volume " + volumeId + " is blank; cannot stage it read-only");
            Tools.mkfs(fsType, node, fsType.equals("ext4") ? List.of("-m", "0") : List.of());
            return;
        }
        if (!found.get().equals(fsType)) {
            throw CsiException.failedPrecondition("volume " + volumeId + " holds a " + found.get()
                    + " filesystem; the capability asks for " + fsType);
        }
        if (fsType.equals("ext4") && !readOnly) growExt4Offline(node);
    }

    private static void growExt4Offline(Path node) {
        Tools.Result info = Tools.run(Tools.DEFAULT_TIMEOUT, "dumpe2fs", List.of("-h", node.toString()));
        long blocks = headerNumber(info.stdout(), "Block count:");
        long blockSize = headerNumber(info.stdout(), "Block size:");
        if (BlockDevice.size(node) - blocks * blockSize < blockSize) return;
        Tools.Result check = Tools.exec(Tools.DEFAULT_TIMEOUT, "e2fsck", List.of("-f", "-p", node.toString()));
        if (check.exitCode() > 1) { // 1: errors corrected
            throw new CsiException(Status.Code.INTERNAL, "e2fsck of " + node + " before growing it exited with "
                    + check.exitCode() + ": " + check.stderr().strip());
        }
        Tools.resize2fs(node);
    }

    private static long headerNumber(String dump, String key) {
        return dump.lines().filter(l -> l.startsWith(key)).findFirst()
                .map(l -> Long.parseLong(l.substring(key.length()).strip()))
                .orElseThrow(() -> new IllegalStateException("dumpe2fs printed no \"" + key + "\""));
    }

    @Override
    public void unstage(String volumeId, Path stagingPath) {
        PoolLayout.checkId("volume", volumeId);
        run("unstaging volume " + volumeId + " from " + stagingPath, () -> {
            Path image = image(volumeId);
            MountTable table = MountTable.read();
            Optional<MountInfo> there = table.at(stagingPath);
            if (there.isPresent()) {
                MountInfo staged = there.get();
                if (!Binds.wasLoopOf(staged, image)) {
                    throw CsiException.failedPrecondition(stagingPath + " has " + staged.source() + " mounted, not volume " + volumeId);
                }
                List<Path> published = table.mounts().stream()
                        .filter(m -> m.major() == staged.major() && m.minor() == staged.minor() && m.id() != staged.id())
                        .map(MountInfo::mountPoint).toList();
                if (!published.isEmpty()) {
                    throw CsiException.failedPrecondition("volume " + volumeId + " is still published at " + published);
                }
                unmount(stagingPath);
            }
            detachUnused(volumeId, image, true);
        });
    }

    private static void unmount(Path path) {
        try {
            Mounts.unmount(path);
        } catch (OsException e) {
            if (e.is(Errno.EBUSY)) throw new CsiException(Status.Code.ABORTED, "unmounting " + path + ": busy; retry", e);
            if (!e.is(Errno.EINVAL)) throw e;
        }
    }

    /**
     * Detaches the image's loop devices that nothing mounts or publishes; with {@code all}, refuses
     * (FAILED_PRECONDITION) while a block publication remains. Waits for the kernel's asynchronous
     * autoclear so a following delete sees the volume unattached.
     */
    private static void detachUnused(String volumeId, Path image, boolean all) {
        MountTable table = MountTable.read();
        for (LoopDevice device : Binds.loopsOf(image)) {
            if (!all && !device.readOnly()) continue;
            if (!table.mountsOf(device.node()).isEmpty()) continue;
            List<MountInfo> binds = Binds.bindsOf(table, device.node());
            if (!binds.isEmpty()) {
                if (!all) continue;
                throw CsiException.failedPrecondition("volume " + volumeId + " is still published at "
                        + binds.stream().map(MountInfo::mountPoint).toList());
            }
            device.detach();
        }
        for (int i = 0; i < 200; i++) {
            MountTable now = MountTable.read();
            boolean settled = Binds.loopsOf(image).stream()
                    .noneMatch(d -> (all || d.readOnly()) && now.mountsOf(d.node()).isEmpty()
                            && Binds.bindsOf(now, d.node()).isEmpty());
            if (settled) return;
            sleep(10);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CsiException(Status.Code.ABORTED, "interrupted");
        }
    }

    @Override
    public void publish(String volumeId, Path stagingPath, Path targetPath, PublishOptions publishOptions) {
        PoolLayout.checkId("volume", volumeId);
        run("publishing volume " + volumeId + " at " + targetPath, () -> {
            Path image = requireImage(volumeId);
            if (publishOptions.block()) publishBlock(volumeId, image, targetPath, publishOptions.readOnly());
            else publishMount(volumeId, image, stagingPath, targetPath, publishOptions);
        });
    }

    private void publishBlock(String volumeId, Path image, Path target, boolean readOnly) {
        MountTable table = MountTable.read();
        List<LoopDevice> devices = LoopDevice.findByBackingFile(image);
        Optional<MountInfo> there = table.at(target);
        if (there.isPresent()) {
            for (LoopDevice d : devices) {
                if (Binds.identity(table, d.node()).filter(id -> id.matches(there.get())).isPresent()) {
                    if (d.readOnly() == readOnly) return;
                    throw CsiException.alreadyExists(target + " has volume " + volumeId + " published read-only=" + d.readOnly());
                }
            }
            throw CsiException.alreadyExists(target + " already has " + there.get().source() + " mounted");
        }
        Optional<LoopDevice> staged = devices.stream().filter(d -> !d.readOnly() && table.mountsOf(d.node()).isEmpty()).findFirst();
        if (staged.isEmpty()) throw CsiException.failedPrecondition("volume " + volumeId + " is not staged as a block device");
        if (!readOnly) {
            Binds.bindDevice(staged.get().node(), target, false);
            return;
        }
        // a read-only mount flag does not stop writes to a device node: publish a read-only loop device
        Optional<LoopDevice> readOnlyDevice = devices.stream().filter(LoopDevice::readOnly).findFirst();
        Path node;
        if (readOnlyDevice.isPresent()) {
            node = readOnlyDevice.get().node();
        } else {
            Set<LoopFlag> flags = loopFlags(false);
            flags.add(LoopFlag.READ_ONLY);
            try (AttachedLoop loop = LoopDevice.attach(image, flags)) {
                node = loop.node();
            }
        }
        try {
            Binds.bindDevice(node, target, true);
        } catch (RuntimeException e) {
            try {
                detachUnused(volumeId, image, false);
            } catch (RuntimeException undo) {
                e.addSuppressed(undo);
            }
            throw e;
        }
    }

    private void publishMount(String volumeId, Path image, Path stagingPath, Path target, PublishOptions publishOptions) {
        MountTable table = MountTable.read();
        Optional<MountInfo> staged = table.at(stagingPath);
        if (staged.isEmpty() || !Binds.isLoopOf(staged.get(), image)) {
            throw CsiException.failedPrecondition("volume " + volumeId + " is not staged at " + stagingPath);
        }
        if (publishOptions.volumeMountGroup().isPresent() && !staged.get().readOnly()
                && !staged.get().superOptions().contains("ro")) {
            Binds.grantGroup(stagingPath, publishOptions.volumeMountGroup().getAsInt());
        }
        Binds.bindDirectory(stagingPath, target, publishOptions.readOnly(), MountOptions.parse(publishOptions.mountFlags()));
    }

    @Override
    public void unpublish(String volumeId, Path targetPath) {
        PoolLayout.checkId("volume", volumeId);
        run("unpublishing volume " + volumeId + " from " + targetPath, () -> {
            Path image = image(volumeId);
            MountTable table = MountTable.read();
            Optional<MountInfo> there = table.at(targetPath);
            if (there.isPresent()) {
                Optional<LoopDevice> device = Binds.loopOf(there.get());
                if (device.isPresent() && !device.get().backingFileDeleted()
                        && !device.get().backingFile().equals(Binds.canonical(image))) {
                    throw CsiException.failedPrecondition(targetPath + " has volume image " + device.get().backingFile()
                            + " mounted, not volume " + volumeId);
                }
            }
            Binds.unmountAndRemove(targetPath);
            if (PoolLayout.type(image) == EntryType.FILE) detachUnused(volumeId, image, false);
        });
    }

    @Override
    public VolumeStats stats(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        return translate("stats of volume " + volumeId + " at " + volumePath, () -> {
            if (PoolLayout.type(volumePath) == EntryType.MISSING) {
                throw CsiException.notFound(volumePath + " does not exist");
            }
            Path image = image(volumeId);
            Optional<String> missing = PoolLayout.type(image) == EntryType.FILE ? Optional.empty()
                    : Optional.of("volume image " + image + " is missing");
            MountTable table = MountTable.read();
            FileStat stat = FileStat.of(volumePath);
            if (stat.isBlockDevice()) {
                boolean ours = LoopDevice.findByBackingFile(image).stream().anyMatch(d -> sameDevice(d.node(), stat));
                Optional<String> abnormal = missing.or(() -> ours ? Optional.empty()
                        : Optional.of(volumePath + " is not a loop device of volume " + volumeId + " (detached?)"));
                return new VolumeStats(BlockDevice.size(volumePath), -1, -1, -1, -1, -1, abnormal);
            }
            MountInfo mount = table.at(volumePath).orElseThrow(() ->
                    CsiException.notFound(volumePath + " is not a mount point of volume " + volumeId));
            FsStats fs = FsStats.of(volumePath);
            List<MountInfo> sameFs = table.mounts().stream()
                    .filter(m -> m.major() == mount.major() && m.minor() == mount.minor()).toList();
            Optional<String> abnormal = missing
                    .or(() -> Binds.isLoopOf(mount, image) ? Optional.empty()
                            : Optional.of(volumePath + " is not backed by a loop device of volume " + volumeId + " (detached?)"))
                    .or(() -> readOnlyAfterErrors(table, sameFs));
            return new VolumeStats(fs.totalBytes(), fs.totalBytes() - fs.freeBytes(), fs.availableBytes(),
                    fs.totalInodes(), fs.totalInodes() - fs.freeInodes(), fs.freeInodes(), abnormal);
        });
    }

    private static boolean sameDevice(Path node, FileStat stat) {
        FileStat other = FileStat.of(node);
        return other.rdevMajor() == stat.rdevMajor() && other.rdevMinor() == stat.rdevMinor();
    }

    @Override
    public long nodeExpand(String volumeId, Path volumePath) {
        PoolLayout.checkId("volume", volumeId);
        return translate("growing the filesystem of volume " + volumeId + " at " + volumePath, () -> {
            Path image = requireImage(volumeId);
            MountTable table = MountTable.read();
            if (PoolLayout.type(volumePath) == EntryType.MISSING) throw CsiException.notFound(volumePath + " does not exist");
            FileStat stat = FileStat.of(volumePath);
            if (stat.isBlockDevice()) {
                refreshAttached(image, fileSize(image));
                return BlockDevice.size(volumePath);
            }
            MountInfo mount = table.at(volumePath).orElseThrow(() ->
                    CsiException.notFound(volumePath + " is not a mount point of volume " + volumeId));
            LoopDevice device = table.mounts().stream()
                    .filter(m -> m.major() == mount.major() && m.minor() == mount.minor())
                    .map(Binds::loopOf).flatMap(Optional::stream)
                    .filter(d -> d.backingFile().equals(Binds.canonical(image))).findFirst()
                    .orElseThrow(() -> CsiException.notFound(volumePath + " is not a mount of volume " + volumeId));
            if (device.size() != fileSize(image)) device.refreshCapacity();
            switch (mount.fsType()) {
                case "ext4" -> resizeExt4Online(device.node());
                case "xfs" -> Tools.xfsGrowfs(volumePath);
                case "btrfs" -> Tools.btrfsResize(volumePath);
                default -> throw CsiException.failedPrecondition("cannot grow a " + mount.fsType() + " filesystem");
            }
            return device.size();
        });
    }

    /** resize2fs on a mounted ext4 is the EXT4_IOC_RESIZE_FS ioctl, which needs CAP_SYS_RESOURCE. */
    private static void resizeExt4Online(Path node) {
        try {
            Tools.resize2fs(node);
        } catch (ToolException e) {
            if (e.stderr().contains("Permission denied")) {
                throw CsiException.failedPrecondition("growing ext4 online needs CAP_SYS_RESOURCE, which this process lacks;"
                        + " the filesystem is grown offline at its next stage (" + e.getMessage() + ")");
            }
            throw e;
        }
    }

    @Override
    public void close() {
        // nothing held: the kernel keeps mounts and loop devices, and the next start reads them back
    }
}
