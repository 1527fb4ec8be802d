package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.Binds;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.engine.VolumeStats;
import io.csi4j.driver.os.BlockDevice;
import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What the node sees of an image volume where it is staged or published: its size and usage, and what is
 * abnormal (the image missing, the loop detached, the filesystem turned read-only by the kernel after an error).
 */
final class LoopStats {
    private LoopStats() {}

    static VolumeStats stats(String volumeId, Path image, Path volumePath) {
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

    private static boolean sameDevice(Path node, FileStat stat) {
        FileStat other = FileStat.of(node);
        return other.rdevMajor() == stat.rdevMajor() && other.rdevMinor() == stat.rdevMinor();
    }
}
