package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.Binds;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.MountOptions;
import io.csi4j.driver.engine.MutableParameters;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.engine.PublishOptions;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.engine.VolumeStats;
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
import io.csi4j.driver.os.ToolException;
import io.csi4j.driver.os.Tools;
import io.csi4j.driver.os.XfsGeometry;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import io.csi4j.driver.os.Trim;

/**
 * The node side of the image engine: attaching images to loop devices, formatting and mounting
 * them at the staging path, publishing by bind mount, and undoing all of it. Every decision is
 * made from the kernel's mount table and loop devices, never from memory, so a restarted plugin
 * picks up where the previous one stopped. {@link ImageEngine} validates ids, translates errors
 * and calls in here with the volume's image path.
 */
final class LoopStaging {
    /** Loop devices read and write the image with O_DIRECT ({@link ImageEngine.Options#directIo}). */
    private final boolean directIo;

    LoopStaging(boolean directIo) {
        this.directIo = directIo;
    }

    static void applyReadAhead(Path node, long kib) {
        BlockDevice.setReadAheadSectors(node, (kib == 0 ? ImageFormat.DEFAULT_READ_AHEAD_KIB : kib) * 2);
    }

    /**
     * A filesystem the kernel turned read-only (errors=remount-ro): its superblock is read-only
     * although no mount of it asked for that (a read-only stage makes its mounts read-only too).
     */
    static Optional<String> readOnlyAfterErrors(MountTable table, List<MountInfo> mounts) {
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

    static void refreshAttached(Path image, long size) {
        for (LoopDevice device : LoopDevice.findByBackingFile(image)) {
            if (device.size() != size) device.refreshCapacity();
        }
    }

    private Set<LoopFlag> loopFlags(boolean autoclear) {
        Set<LoopFlag> flags = EnumSet.noneOf(LoopFlag.class);
        if (autoclear) flags.add(LoopFlag.AUTOCLEAR);
        if (directIo) flags.add(LoopFlag.DIRECT_IO);
        return flags;
    }

    /** {@code options.fsType()} is resolved already (the capability's, else the recorded one, else ext4). */
    void stage(String volumeId, Path image, Path stagingPath, StageOptions options) {
        switch (options) {
            case StageOptions.Block block -> stageBlock(volumeId, image, block);
            case StageOptions.Mount mount -> stageMount(volumeId, image, stagingPath, mount);
        }
    }

    private void stageBlock(String volumeId, Path image, StageOptions.Block block) {
        MountTable table = MountTable.read();
        List<LoopDevice> devices = LoopDevice.findByBackingFile(image).stream().filter(d -> !d.readOnly()).toList();
        for (LoopDevice d : devices) {
            if (!table.mountsOf(d.node()).isEmpty()) {
                throw StorageException.inUse("volume " + volumeId + " is staged as a filesystem at "
                        + table.mountsOf(d.node()).getFirst().mountPoint());
            }
        }
        Path node;
        if (devices.isEmpty()) {
            // no autoclear: nothing holds a raw block volume open between uses
            try (AttachedLoop loop = LoopDevice.attach(image, loopFlags(false), DataPath.CONFIGURED.loopBlockSize())) {
                node = loop.node();
            }
        } else {
            node = devices.getFirst().node();
        }
        if (block.readAheadKiB() > 0) applyReadAhead(node, MutableParameters.checkReadAhead(block.readAheadKiB()));
    }

    private void stageMount(String volumeId, Path image, Path stagingPath, StageOptions.Mount mount) {
        String fsType = ImageFormat.fsType(mount.fsType());
        MountOptions mountOptions = MountOptions.parse(mount.mountFlags());
        long readAhead = MutableParameters.checkReadAhead(mount.readAheadKiB());
        try {
            Files.createDirectories(stagingPath);
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + stagingPath, e);
        }
        MountTable table = MountTable.read();
        Optional<MountInfo> there = table.at(stagingPath);
        if (there.isPresent()) {
            if (!Binds.isLoopOf(there.get(), image)) {
                throw StorageException.exists(stagingPath + " already has " + there.get().source() + " mounted, not volume " + volumeId);
            }
            if (!there.get().fsType().equals(fsType)) {
                throw StorageException.exists("volume " + volumeId + " is staged at " + stagingPath + " as "
                        + there.get().fsType() + ", not " + fsType);
            }
            if (readAhead > 0) applyReadAhead(Path.of(there.get().source()), readAhead);
            return;
        }
        List<LoopDevice> devices = LoopDevice.findByBackingFile(image);
        for (LoopDevice d : devices) {
            List<MountInfo> mounts = table.mountsOf(d.node());
            if (!mounts.isEmpty()) {
                throw StorageException.inUse("volume " + volumeId + " is already staged at " + mounts.getFirst().mountPoint());
            }
            if (d.readOnly() || Binds.bindsOf(table, d.node()).size() > 0) {
                throw StorageException.inUse("volume " + volumeId + " is in use as a block device (" + d.node() + ")");
            }
        }
        // a device left from an earlier attempt (not autoclear) is reused; else a new one that the mount will hold
        Optional<LoopDevice> leftover = devices.stream().findFirst();
        try (AttachedLoop loop = leftover.isEmpty() ? LoopDevice.attach(image, loopFlags(true), DataPath.CONFIGURED.loopBlockSize()) : null) {
            Path node = loop != null ? loop.node() : leftover.get().node();
            prepareFilesystem(volumeId, image, node, fsType, mountOptions.readOnly());
            Mounts.mount(node.toString(), stagingPath, fsType, mountOptions.flags(), mountData(fsType, mountOptions));
            if (readAhead > 0) applyReadAhead(node, readAhead);
        }
        if (!mountOptions.readOnly()) {
            if (fsType.equals("xfs")) growXfs(stagingPath); // grows if the image grew; rewrites the secondary superblocks
            // mkfs, an offline grow and growfs wrote through the loop into the image's page cache: durable before the answer
            Durable.fsync(image);
        }
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
                throw StorageException.inUse("volume " + volumeId + " holds data but no filesystem blkid knows;"
                        + " refusing to format it as " + fsType);
            }
            if (readOnly) throw StorageException.inUse("volume " + volumeId + " is blank; cannot stage it read-only");
            Tools.mkfs(fsType, node, fsType.equals("ext4") ? List.of("-m", "0") : List.of());
            return;
        }
        if (!found.get().equals(fsType)) {
            throw StorageException.inUse("volume " + volumeId + " holds a " + found.get()
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
        if (check.exitCode() > 2) { // 1, 2: errors corrected; 4 and up: left uncorrected, or e2fsck failed
            throw new StorageException(StorageException.Reason.FAILED, "e2fsck of " + node + " before growing it exited with "
                    + check.exitCode() + ": " + check.stderr().strip());
        }
        Tools.resize2fs(node);
    }

    private static long headerNumber(String dump, String key) {
        return dump.lines().filter(l -> l.startsWith(key)).findFirst()
                .map(l -> Long.parseLong(l.substring(key.length()).strip()))
                .orElseThrow(() -> new IllegalStateException("dumpe2fs printed no \"" + key + "\""));
    }

    void unstage(String volumeId, Path image, Path stagingPath) {
        MountTable table = MountTable.read();
        Optional<MountInfo> there = table.at(stagingPath);
        if (there.isPresent()) {
            MountInfo staged = there.get();
            if (!Binds.wasLoopOf(staged, image)) {
                throw StorageException.inUse(stagingPath + " has " + staged.source() + " mounted, not volume " + volumeId);
            }
            List<Path> published = table.mounts().stream()
                    .filter(m -> m.major() == staged.major() && m.minor() == staged.minor() && m.id() != staged.id())
                    .map(MountInfo::mountPoint).toList();
            if (!published.isEmpty()) {
                throw StorageException.inUse("volume " + volumeId + " is still published at " + published);
            }
            unmount(stagingPath);
        }
        detachUnused(volumeId, image, true);
    }

    private static void unmount(Path path) {
        try {
            Mounts.unmount(path);
        } catch (OsException e) {
            if (e.is(Errno.EBUSY)) throw new StorageException(StorageException.Reason.BUSY, "unmounting " + path + ": busy; retry", e);
            if (!e.is(Errno.EINVAL)) throw e;
        }
    }

    /**
     * Detaches the image's loop devices that nothing mounts or publishes; with {@code all}, refuses
     * (IN_USE) while a block publication remains. Waits for the kernel's asynchronous
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
                throw StorageException.inUse("volume " + volumeId + " is still published at "
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
            throw new StorageException(StorageException.Reason.BUSY, "interrupted");
        }
    }

    void publish(String volumeId, Path image, Path stagingPath, Path targetPath, PublishOptions publishOptions) {
        if (publishOptions.block()) publishBlock(volumeId, image, targetPath, publishOptions.readOnly());
        else publishMount(volumeId, image, stagingPath, targetPath, publishOptions);
    }

    private void publishBlock(String volumeId, Path image, Path target, boolean readOnly) {
        MountTable table = MountTable.read();
        List<LoopDevice> devices = LoopDevice.findByBackingFile(image);
        Optional<MountInfo> there = table.at(target);
        if (there.isPresent()) {
            for (LoopDevice d : devices) {
                if (Binds.identity(table, d.node()).filter(id -> id.matches(there.get())).isPresent()) {
                    if (d.readOnly() == readOnly) return;
                    throw StorageException.exists(target + " has volume " + volumeId + " published read-only=" + d.readOnly());
                }
            }
            throw StorageException.exists(target + " already has " + there.get().source() + " mounted");
        }
        Optional<LoopDevice> staged = devices.stream().filter(d -> !d.readOnly() && table.mountsOf(d.node()).isEmpty()).findFirst();
        if (staged.isEmpty()) throw StorageException.inUse("volume " + volumeId + " is not staged as a block device");
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
            try (AttachedLoop loop = LoopDevice.attach(image, flags, DataPath.CONFIGURED.loopBlockSize())) {
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
            throw StorageException.inUse("volume " + volumeId + " is not staged at " + stagingPath);
        }
        if (publishOptions.volumeMountGroup().isPresent() && !staged.get().readOnly()
                && !staged.get().superOptions().contains("ro")) {
            Binds.grantGroup(stagingPath, publishOptions.volumeMountGroup().getAsInt());
        }
        Binds.bindDirectory(stagingPath, target, publishOptions.readOnly(), MountOptions.parse(publishOptions.mountFlags()));
    }

    void unpublish(String volumeId, Path image, Path targetPath) {
        MountTable table = MountTable.read();
        Optional<MountInfo> there = table.at(targetPath);
        // only this volume's mount comes down: a target_path naming another mount ("/", someone else's
        // tmpfs) is refused, never unmounted
        if (there.isPresent() && !publishedFrom(there.get(), image, targetPath)) {
            throw StorageException.inUse(targetPath + " has " + there.get().source() + ":" + there.get().root()
                    + " mounted, not volume " + volumeId);
        }
        Binds.unmountAndRemove(targetPath);
        if (PoolLayout.type(image) == EntryType.FILE) detachUnused(volumeId, image, false);
    }

    /**
     * FITRIM of the volume's filesystem at {@code volumePath}, which must be a mount of this image's loop device
     * (its staging mount or a bind of it): no other filesystem is ever trimmed through a volume's request.
     */
    void trim(String volumeId, Path image, Path volumePath) {
        MountInfo mount = MountTable.read().at(volumePath).orElseThrow(() ->
                StorageException.notFound(volumePath + " is not a mount point of volume " + volumeId));
        if (FileStat.of(volumePath).isBlockDevice() || !Binds.isLoopOf(mount, image)) {
            throw StorageException.notFound(volumePath + " is not a filesystem of volume " + volumeId);
        }
        Trim.filesystem(volumePath);
    }

    VolumeStats stats(String volumeId, Path image, Path volumePath) {
        if (PoolLayout.type(volumePath) == EntryType.MISSING) {
            throw StorageException.notFound(volumePath + " does not exist");
        }
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
                StorageException.notFound(volumePath + " is not a mount point of volume " + volumeId));
        FsStats fs = FsStats.of(volumePath);
        List<MountInfo> sameFs = table.mounts().stream()
                .filter(m -> m.major() == mount.major() && m.minor() == mount.minor()).toList();
        Optional<String> abnormal = missing
                .or(() -> Binds.isLoopOf(mount, image) ? Optional.empty()
                        : Optional.of(volumePath + " is not backed by a loop device of volume " + volumeId + " (detached?)"))
                .or(() -> readOnlyAfterErrors(table, sameFs));
        return new VolumeStats(fs.totalBytes(), fs.totalBytes() - fs.freeBytes(), fs.availableBytes(),
                fs.totalInodes(), fs.totalInodes() - fs.freeInodes(), fs.freeInodes(), abnormal);
    }

    /**
     * The mount at a target is this image's: its filesystem (bound from staging), or a loop device node
     * bound onto a file (a block publish) whose loop still serves this image or has been detached since.
     */
    private static boolean publishedFrom(MountInfo mount, Path image, Path target) {
        if (Binds.wasLoopOf(mount, image)) return true;
        FileStat stat = FileStat.of(target);
        if (!stat.isBlockDevice() || stat.rdevMajor() != 7) return false;   // 7: loop devices
        return LoopDevice.find(stat.rdevMinor()).map(d -> d.backingFile().equals(Binds.canonical(image))).orElse(true);
    }

    private static boolean sameDevice(Path node, FileStat stat) {
        FileStat other = FileStat.of(node);
        return other.rdevMajor() == stat.rdevMajor() && other.rdevMinor() == stat.rdevMinor();
    }

    long nodeExpand(String volumeId, Path image, Path volumePath) {
        MountTable table = MountTable.read();
        if (PoolLayout.type(volumePath) == EntryType.MISSING) throw StorageException.notFound(volumePath + " does not exist");
        FileStat stat = FileStat.of(volumePath);
        if (stat.isBlockDevice()) {
            refreshAttached(image, ImageFormat.fileSize(image));
            return BlockDevice.size(volumePath);
        }
        MountInfo mount = table.at(volumePath).orElseThrow(() ->
                StorageException.notFound(volumePath + " is not a mount point of volume " + volumeId));
        LoopDevice device = table.mounts().stream()
                .filter(m -> m.major() == mount.major() && m.minor() == mount.minor())
                .map(Binds::loopOf).flatMap(Optional::stream)
                .filter(d -> d.backingFile().equals(Binds.canonical(image))).findFirst()
                .orElseThrow(() -> StorageException.notFound(volumePath + " is not a mount of volume " + volumeId));
        if (device.size() != ImageFormat.fileSize(image)) device.refreshCapacity();
        switch (mount.fsType()) {
            case "ext4" -> resizeExt4Online(device.node());
            case "xfs" -> growXfs(volumePath);
            case "btrfs" -> Tools.btrfsResize(volumePath);
            default -> throw StorageException.inUse("cannot grow a " + mount.fsType() + " filesystem");
        }
        // xfs_growfs commits the new size through its log, then writes the secondary superblocks with no cache
        // flush: answered before they are durable, a power cut leaves them stale and xfs_repair shrinks the
        // filesystem back (found by the power-cut suite). The loop's writes sit in the image's page cache.
        Durable.fsync(image);
        return device.size();
    }

    /**
     * xfs_growfs, then, if the filesystem grew, a freeze and thaw. The new geometry is logged, and transactions in
     * the new allocation groups relog the superblock, so it can stay in the log only, the one on the disk still
     * the old size: after a power cut, log recovery checks those transactions' buffers against the old size and
     * fails (EUCLEAN, the volume cannot be mounted; found by the power-cut suite). A freeze writes the metadata
     * in place and covers the log. EBUSY: frozen already, by a snapshot, which did the same.
     */
    private static void growXfs(Path mountPoint) {
        long before = FsStats.of(mountPoint).totalBytes();
        Tools.xfsGrowfs(mountPoint);
        // a grow cut short (unanswered, then retried) left secondary superblocks stale: xfs_growfs skips them now
        XfsGeometry.rewriteSecondarySuperblocks(mountPoint);
        if (FsStats.of(mountPoint).totalBytes() == before) return;
        try (Freeze.Frozen frozen = Freeze.freeze(mountPoint)) {
            // the freeze is the point: metadata written in place, the log covered
        } catch (OsException e) {
            if (!e.is(Errno.EBUSY)) throw e;
        }
    }

    /** resize2fs on a mounted ext4 is the EXT4_IOC_RESIZE_FS ioctl, which needs CAP_SYS_RESOURCE. */
    private static void resizeExt4Online(Path node) {
        try {
            Tools.resize2fs(node);
        } catch (ToolException e) {
            if (e.stderr().contains("Permission denied")) {
                throw StorageException.inUse("growing ext4 online needs CAP_SYS_RESOURCE, which this process lacks;"
                        + " the filesystem is grown offline at its next stage (" + e.getMessage() + ")");
            }
            throw e;
        }
    }

}
