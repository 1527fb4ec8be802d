package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.Binds;
import io.csi4j.driver.engine.DataPath;
import io.csi4j.driver.engine.MountOptions;
import io.csi4j.driver.engine.MutableParameters;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.engine.StageOptions;
import io.csi4j.driver.os.AttachedLoop;
import io.csi4j.driver.os.BlockDevice;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.Fallocate;
import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.Freeze;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.ToolException;
import io.csi4j.driver.os.Tools;
import io.csi4j.driver.os.Trim;
import io.csi4j.driver.os.XfsGeometry;
import io.csi4j.driver.os.ZeroFill;
import io.csi4j.driver.storage.StorageException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * The filesystems on the image engine's loop devices: a volume staged as a filesystem (attached, formatted when
 * blank, grown offline when smaller than its image, mounted), grown online at NodeExpandVolume, trimmed. What mkfs
 * and the grows write through the loop may sit in the image's page cache: the image is fsynced before the answer,
 * and a grown XFS is frozen and thawed (see {@code growXfs}). mkfs runs between the durable marks of
 * {@link FormatIntent}: a power cut in it leaves a half-made filesystem that the retried stage formats again
 * instead of mounting (docs/power-cut.md, finding 4). {@link LoopStaging} calls in here.
 */
final class LoopFilesystems {
    private static final Logger LOG = Logger.getLogger(LoopFilesystems.class.getName());
    /** Loop devices read and write the image with O_DIRECT ({@link ImageEngine.Options#directIo}). */
    private final boolean directIo;

    LoopFilesystems(boolean directIo) {
        this.directIo = directIo;
    }

    void stageMount(String volumeId, Path image, Path stagingPath, StageOptions.Mount mount) {
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
            if (readAhead > 0) LoopStaging.applyReadAhead(Path.of(there.get().source()), readAhead);
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
        try (AttachedLoop loop = leftover.isEmpty() ? LoopDevice.attach(image, LoopStaging.loopFlags(directIo, true), DataPath.CONFIGURED.loopBlockSize()) : null) {
            Path node = loop != null ? loop.node() : leftover.get().node();
            prepareFilesystem(volumeId, image, node, fsType, mountOptions.readOnly());
            Mounts.mount(node.toString(), stagingPath, fsType, mountOptions.flags(), mountData(fsType, mountOptions));
            if (readAhead > 0) LoopStaging.applyReadAhead(node, readAhead);
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
        if (FormatIntent.pending(image)) {
            // a power cut or crash in this blank volume's mkfs left a half-made filesystem (an XFS with its
            // mkfs-in-progress bit, which the kernel refuses; ext4 blocks without a superblock), never data
            if (readOnly) throw StorageException.inUse("volume " + volumeId + " was being formatted when the node went down;"
                    + " stage it read-write once to finish the format");
            LOG.info("volume " + volumeId + ": its format was cut short (the node went down in mkfs); formatting it again as " + fsType);
            format(image, node, fsType, ZeroFill.fresh(image));
            return;
        }
        Optional<String> found = Tools.blkidType(node);
        if (found.isEmpty()) {
            // a thick volume is allocated all through from its create: its mark, not its allocation, says "blank"
            boolean thick = ZeroFill.fresh(image);
            if (!thick && Fallocate.allocatedBytes(image) != 0) {
                throw StorageException.inUse("volume " + volumeId + " holds data but no filesystem blkid knows;"
                        + " refusing to format it as " + fsType);
            }
            if (readOnly) throw StorageException.inUse("volume " + volumeId + " is blank; cannot stage it read-only");
            format(image, node, fsType, thick);
            return;
        }
        if (!found.get().equals(fsType)) {
            throw StorageException.inUse("volume " + volumeId + " holds a " + found.get()
                    + " filesystem; the capability asks for " + fsType);
        }
        if (fsType.equals("ext4") && !readOnly) growExt4Offline(node);
    }

    /**
     * A thick image's mkfs discards nothing and initializes its inode tables and journal with writes: a discard or a
     * zero-out through the loop device punches holes or leaves unwritten extents in the image.
     */
    static List<String> mkfsOptions(String fsType, boolean thick) {
        return switch (fsType) {
            case "ext4" -> thick ? List.of("-m", "0", "-E", "nodiscard,lazy_itable_init=0,lazy_journal_init=0") : List.of("-m", "0");
            case "xfs", "btrfs" -> thick ? List.of("-K") : List.of();
            default -> List.of();
        };
    }

    /**
     * mkfs of a blank volume, between a durable {@link FormatIntent} mark and its removal: a cut in between leaves
     * the mark, and the retried stage formats again instead of meeting a half-made filesystem. The removal fsyncs
     * the image itself (FileMarks.clear). A thick image keeps its fresh-fill mark until
     * its fill after mkfs is done, so a retry after a cut formats it as thick again.
     */
    private static void format(Path image, Path node, String fsType, boolean thick) {
        FormatIntent.begin(image);
        Tools.mkfs(fsType, node, mkfsOptions(fsType, thick));
        Durable.fsync(image);   // every block mkfs wrote, before the mark that would redo it goes
        if (thick) {
            // what mkfs discarded or zeroed out through the loop came back as holes or unwritten extents: zeros
            // over exactly those, then the fresh-fill mark goes
            ZeroFill.fill(image, 0);
            ZeroFill.unmark(image);
        }
        FormatIntent.end(image);
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

    long nodeExpand(String volumeId, Path image, Path volumePath) {
        MountTable table = MountTable.read();
        if (PoolLayout.type(volumePath) == EntryType.MISSING) throw StorageException.notFound(volumePath + " does not exist");
        FileStat stat = FileStat.of(volumePath);
        if (stat.isBlockDevice()) {
            LoopStaging.refreshAttached(image, ImageFormat.fileSize(image));
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
