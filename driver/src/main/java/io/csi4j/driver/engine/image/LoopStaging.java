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
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.FileStat;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.LoopFlag;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.ZeroFill;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The node side of the image engine: attaching images to loop devices, staging them (a block volume here, a
 * filesystem in {@link LoopFilesystems}), publishing by bind mount, and undoing all of it. Every decision is
 * made from the kernel's mount table and loop devices, never from memory, so a restarted plugin
 * picks up where the previous one stopped. {@link ImageNode} validates ids, translates errors
 * and calls in here with the volume's image path; stats are {@link LoopStats}.
 */
final class LoopStaging {
    /** Loop devices read and write the image with O_DIRECT ({@link ImageEngine.Options#directIo}). */
    private final boolean directIo;
    private final LoopFilesystems filesystems;

    LoopStaging(boolean directIo) {
        this.directIo = directIo;
        this.filesystems = new LoopFilesystems(directIo);
    }

    static void applyReadAhead(Path node, long kib) {
        BlockDevice.setReadAheadSectors(node, (kib == 0 ? ImageFormat.DEFAULT_READ_AHEAD_KIB : kib) * 2);
    }

    static void refreshAttached(Path image, long size) {
        for (LoopDevice device : LoopDevice.findByBackingFile(image)) {
            if (device.size() != size) device.refreshCapacity();
        }
    }

    /** Both the block and the filesystem side attach with these. */
    static Set<LoopFlag> loopFlags(boolean directIo, boolean autoclear) {
        Set<LoopFlag> flags = EnumSet.noneOf(LoopFlag.class);
        if (autoclear) flags.add(LoopFlag.AUTOCLEAR);
        if (directIo) flags.add(LoopFlag.DIRECT_IO);
        return flags;
    }

    /** {@code options.fsType()} is resolved already (the capability's, else the recorded one, else ext4). */
    void stage(String volumeId, Path image, Path stagingPath, StageOptions options) {
        switch (options) {
            case StageOptions.Block block -> stageBlock(volumeId, image, block);
            case StageOptions.Mount mount -> filesystems.stageMount(volumeId, image, stagingPath, mount);
        }
    }

    private void stageBlock(String volumeId, Path image, StageOptions.Block block) {
        ZeroFill.unmark(image);   // a thick volume's zeros are the workload's data from now on: never formatted over
        MountTable table = MountTable.read();
        List<LoopDevice> devices = LoopDevice.findByBackingFile(image).stream().filter(d -> !d.readOnly()).toList();
        for (LoopDevice d : devices) {
            if (!table.mountsOf(d.node()).isEmpty()) {
                throw StorageException.inUse("volume " + volumeId + " is staged as a filesystem at "
                        + table.mountsOf(d.node()).getFirst().mountPoint());
            }
        }
        // a format cut short no longer licenses a reformat once the device is handed out raw (FormatIntent)
        FormatIntent.abandon(image);
        Path node;
        if (devices.isEmpty()) {
            // no autoclear: nothing holds a raw block volume open between uses
            try (AttachedLoop loop = LoopDevice.attach(image, loopFlags(directIo, false), DataPath.CONFIGURED.loopBlockSize())) {
                node = loop.node();
            }
        } else {
            node = devices.getFirst().node();
        }
        if (block.readAheadKiB() > 0) applyReadAhead(node, MutableParameters.checkReadAhead(block.readAheadKiB()));
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
            Set<LoopFlag> flags = loopFlags(directIo, false);
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

    /** FITRIM of the volume's filesystem: {@link LoopFilesystems#trim}. */
    void trim(String volumeId, Path image, Path volumePath) {
        filesystems.trim(volumeId, image, volumePath);
    }

    /** {@link LoopStats#stats}. */
    VolumeStats stats(String volumeId, Path image, Path volumePath) {
        return LoopStats.stats(volumeId, image, volumePath);
    }

    /** A block volume's device refreshed, a filesystem grown: {@link LoopFilesystems#nodeExpand}. */
    long nodeExpand(String volumeId, Path image, Path volumePath) {
        return filesystems.nodeExpand(volumeId, image, volumePath);
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
}
