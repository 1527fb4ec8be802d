package io.csi4j.driver.engine;

import io.csi4j.driver.os.AttachedLoop;
import io.csi4j.driver.os.Durable;
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountFlag;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.Reflink;
import io.csi4j.driver.os.Tools;
import io.csi4j.driver.storage.DataDir;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * The directory volumes live in: {@code <data-dir>/pool}. Either a plain directory on whatever
 * filesystem holds the data directory, or, with a pool size, an XFS filesystem (reflink on) in
 * {@code <data-dir>/pool.img} that we attach and mount there ourselves. That mount outlives the
 * plugin (workloads keep running while it is down): {@link #open} adopts it when it is mounted,
 * and attaches and mounts it again after a reboot.
 */
public final class Pool {
    private static final long MIN_POOL_SIZE = 300L << 20; // mkfs.xfs refuses smaller

    private final Path dataDir;
    private final Path path;
    private final Optional<Path> image;
    private final boolean reflink;
    private final String filesystem;
    private final String how;

    private Pool(Path dataDir, Path path, Optional<Path> image, String how) {
        this.dataDir = dataDir;
        this.path = path;
        this.image = image;
        this.how = how;
        this.filesystem = FsStats.of(path).type();
        this.reflink = Reflink.isSupported(path);
    }

    /**
     * Opens the pool of {@code dataDir}. Without {@code poolSize}, {@code <data-dir>/pool} is a plain
     * directory. With it, the pool is an XFS image of that size: created and formatted once, adopted
     * when already mounted, re-attached when not, grown when the size became larger.
     */
    public static Pool open(DataDir dataDir, OptionalLong poolSize) {
        DataDir data;
        try {
            Durable.createDirectories(dataDir.root());     // what the pool and the catalog hold must not lose its name
            data = new DataDir(dataDir.root().toRealPath());
            Durable.createDirectories(data.pool());
        } catch (IOException e) {
            throw new UncheckedIOException("data directory " + dataDir.root(), e);
        }
        Path poolDir = data.pool();
        if (PoolLayout.type(poolDir) != PoolLayout.EntryType.DIRECTORY) {
            throw new IllegalStateException(poolDir + " must be a directory, not a symlink or a file");
        }
        if (poolSize.isEmpty()) return new Pool(data.root(), poolDir, Optional.empty(), "directory");
        long size = poolSize.getAsLong();
        if (size < MIN_POOL_SIZE) throw new IllegalArgumentException("pool size " + size + " is below " + MIN_POOL_SIZE + " bytes");
        Path image = data.poolImage();
        String how = mountImage(data.root(), poolDir, image, size);
        grow(image, poolDir, size);
        return new Pool(data.root(), poolDir, Optional.of(image), how);
    }

    /**
     * Unmounts the data directory's pool image, if it has one, and detaches its loop device: the mount
     * outlives a plugin by design, so whoever removes the data directory (the demo, a test) takes it down.
     */
    public static void uninstall(DataDir dataDir) {
        OptionalLong size = dataDir.poolImageBytes();
        if (size.isPresent()) open(dataDir, size).release();
    }

    private static String mountImage(Path data, Path poolDir, Path image, long size) {
        MountTable table = MountTable.read();
        Optional<MountInfo> mounted = table.at(poolDir);
        if (mounted.isPresent()) {
            if (Binds.isLoopOf(mounted.get(), image)) return "adopted (mounted from " + mounted.get().source() + ")";
            throw new IllegalStateException(poolDir + " has " + mounted.get().source() + " (" + mounted.get().fsType()
                    + ") mounted, not " + image + "; unmount it or start without a pool size");
        }
        removeStaleImages(data);
        boolean created = false;
        if (PoolLayout.type(image) == PoolLayout.EntryType.MISSING) {
            create(image, size);
            created = true;
        } else if (PoolLayout.type(image) != PoolLayout.EntryType.FILE) {
            throw new IllegalStateException(image + " is not a regular file");
        }
        try (Stream<Path> entries = Files.list(poolDir)) {
            if (entries.findAny().isPresent()) {
                throw new IllegalStateException(poolDir + " is not empty; mounting " + image + " over it would hide its content");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("listing " + poolDir, e);
        }
        // a device left bound by an earlier start that died before mounting: reuse it
        try {
            Optional<LoopDevice> bound = LoopDevice.findByBackingFile(image).stream()
                    .filter(d -> MountTable.read().mountsOf(d.node()).isEmpty()).findFirst();
            if (bound.isPresent()) {
                mount(bound.get().node(), poolDir);
            } else {
                try (AttachedLoop loop = DataPath.CONFIGURED.attachPool(image)) {
                    mount(loop.node(), poolDir);
                } // the mount holds the device now; unmounting it detaches it
            }
        } catch (OsException e) {
            // never serve the bare directory instead: volumes would be hidden and snapshots silently full copies
            throw new IllegalStateException("cannot mount the pool image " + image + " on " + poolDir + " (" + e.getMessage()
                    + "); " + (e.errno() == Errno.EPERM || e.errno() == Errno.EACCES
                            ? "attaching and mounting it needs root"
                            : "check it with xfs_repair -n " + image)
                    + ", or start with --pool-size 0 to serve from the directory itself", e);
        }
        return (created ? "created and mounted" : "attached and mounted") + " from " + image;
    }

    private static void mount(Path node, Path poolDir) {
        Mounts.mount(node.toString(), poolDir, "xfs", EnumSet.of(MountFlag.NODEV, MountFlag.NOSUID), null);
    }

    /** A sparse file, formatted XFS with reflink, then renamed into place: a crash leaves no half-made pool. */
    private static void create(Path image, long size) {
        Path temp = image.resolveSibling(DataDir.POOL_IMAGE + ".tmp-" + UUID.randomUUID().toString().substring(0, 8));
        try {
            try (RandomAccessFile file = new RandomAccessFile(temp.toFile(), "rw")) {
                file.setLength(size);
            }
            Tools.mkfs("xfs", temp, List.of("-m", "reflink=1"));
            Durable.fsync(temp);
            Durable.atomicRename(temp, image);
        } catch (IOException e) {
            throw new UncheckedIOException("creating " + image, e);
        } finally {
            PoolLayout.deleteQuietly(temp);
        }
    }

    private static void removeStaleImages(Path data) {
        try (DirectoryStream<Path> stale = Files.newDirectoryStream(data, DataDir.POOL_IMAGE + ".tmp-*")) {
            for (Path p : stale) Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException("cleaning " + data, e);
        }
    }

    /** Grows image, loop device and XFS online when the configured size is larger than the image. */
    private static void grow(Path image, Path poolDir, long size) {
        try {
            if (Files.size(image) >= size) return;
            try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
                file.setLength(size);
            }
            Durable.fsync(image);
        } catch (IOException e) {
            throw new UncheckedIOException("growing " + image, e);
        }
        for (LoopDevice device : LoopDevice.findByBackingFile(image)) device.refreshCapacity();
        Tools.xfsGrowfs(poolDir);
    }

    public Path dataDir() { return dataDir; }

    /** {@code <data-dir>/pool}. */
    public Path path() { return path; }

    /** The pool's own image, when it has one ({@code --pool-size}). */
    public Optional<Path> image() { return image; }

    public boolean reflink() { return reflink; }

    /** "xfs", "ext4", "btrfs" ... of the pool directory. */
    public String filesystem() { return filesystem; }

    public FsStats stats() { return FsStats.of(path); }

    /** One line for the start-up log: what the pool is and what that means for snapshots. */
    public String describe() {
        return "pool " + path + " (" + filesystem + ", " + how + "): "
                + (reflink ? "reflink available, snapshots and clones are instant copy-on-write"
                           : "no reflink on " + filesystem + ", snapshots, clones and restores are full sparse-aware copies"
                             + (image.isEmpty() ? "; start with --pool-size SIZE for an XFS pool with instant snapshots" : ""));
    }

    /**
     * Unmounts the pool image (the kernel then detaches its loop device). Not part of a normal stop:
     * the pool stays mounted while the plugin is down. For uninstalling, and for tests that
     * simulate a reboot. A plain-directory pool has nothing to release.
     */
    public void release() {
        if (image.isEmpty()) return;
        MountTable.read().at(path).filter(m -> Binds.isLoopOf(m, image.get())).ifPresent(m -> Mounts.unmount(path));
        for (int i = 0; i < 100 && !LoopDevice.findByBackingFile(image.get()).isEmpty(); i++) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (LoopDevice leftover : LoopDevice.findByBackingFile(image.get())) leftover.detach();
    }
}
