package io.csi4j.driver.testing;

import io.csi4j.driver.os.AttachedLoop;
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.LoopFlag;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.ToolException;
import io.csi4j.driver.os.Tools;
import io.csi4j.driver.os.UnmountFlag;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A real, throw-away filesystem for tests: a sparse image in a temp dir, formatted ext4, xfs or
 * btrfs, attached to an autoclear loop device and mounted. {@link #close()} unmounts (the kernel
 * then detaches the loop device) and deletes everything, also after a half-finished create.
 */
public final class ScratchFilesystem implements AutoCloseable {
    public static final long DEFAULT_SIZE = 512L << 20; // xfsprogs refuses filesystems under 300 MiB

    private final String fsType;
    private final Path dir;
    private final Path image;
    private final Path mountPoint;
    private LoopDevice device;

    private ScratchFilesystem(String fsType, Path dir) {
        this.fsType = fsType;
        this.dir = dir;
        this.image = dir.resolve(fsType + ".img");
        this.mountPoint = dir.resolve("mnt");
    }

    /** Skips the test (fails it in CI) unless we are root and the mkfs for {@code fsType} is installed. */
    public static void require(String fsType) {
        Privileged.requireRoot();
        String why = null;
        try {
            Tools.locate("mkfs." + fsType);
        } catch (ToolException e) {
            why = e.getMessage();
        }
        Privileged.require(why == null, String.valueOf(why));
    }

    /** Whether this process has a capability (bit number from linux/capability.h) in its effective set. */
    public static boolean hasCapability(int bit) {
        try {
            String effective = Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(line -> line.startsWith("CapEff:")).findFirst().orElseThrow()
                    .substring("CapEff:".length()).strip();
            return (Long.parseUnsignedLong(effective, 16) & (1L << bit)) != 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static final int CAP_SYS_RESOURCE = 24;

    public static ScratchFilesystem create(String fsType) {
        return create(fsType, DEFAULT_SIZE);
    }

    public static ScratchFilesystem create(String fsType, long sizeBytes) {
        return create(fsType, sizeBytes, List.of(), null);
    }

    /** With mkfs options and mount data (e.g. {@code "prjquota"}, which XFS takes only at mount time). */
    public static ScratchFilesystem create(String fsType, long sizeBytes, List<String> mkfsOptions, String mountData) {
        ScratchFilesystem fs;
        try {
            fs = new ScratchFilesystem(fsType, Files.createTempDirectory("csi4j-scratch-" + fsType + "-"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            fs.build(sizeBytes, mkfsOptions, mountData);
            return fs;
        } catch (RuntimeException | Error e) {
            try {
                fs.close();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    private void build(long sizeBytes, List<String> mkfsOptions, String mountData) {
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
            file.setLength(sizeBytes);
            Files.createDirectory(mountPoint);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.of(LoopFlag.AUTOCLEAR))) {
            device = loop.device();
            Tools.mkfs(fsType, loop.node(), mkfsOptions);
            Mounts.mount(loop.node().toString(), mountPoint, fsType, Set.of(), mountData);
        } // the mount now holds the device; unmounting it detaches the loop device
    }

    public String fsType() { return fsType; }

    /** The temp directory holding image and mount point (not on the scratch filesystem). */
    public Path dir() { return dir; }

    public Path image() { return image; }

    public Path mountPoint() { return mountPoint; }

    public LoopDevice device() { return device; }

    public FsStats stats() { return FsStats.of(mountPoint); }

    /**
     * Grows image, loop device and filesystem online, the way volume expansion does. ext4 online
     * resize needs CAP_SYS_RESOURCE (resize2fs says "Permission denied to resize filesystem").
     */
    public void grow(long newSizeBytes) {
        try (RandomAccessFile file = new RandomAccessFile(image.toFile(), "rw")) {
            file.setLength(newSizeBytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        device.refreshCapacity();
        switch (fsType) {
            case "ext4" -> Tools.resize2fs(device.node());
            case "xfs" -> Tools.xfsGrowfs(mountPoint);
            case "btrfs" -> Tools.btrfsResize(mountPoint);
            default -> throw new IllegalStateException(fsType);
        }
    }

    @Override
    public void close() {
        RuntimeException failure = null;
        try {
            unmount();
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            releaseLoop();
        } catch (RuntimeException e) {
            if (failure == null) failure = e; else failure.addSuppressed(e);
        }
        try {
            // never walk into a filesystem that is still mounted: that would delete its content
            if (MountTable.read().isMountPoint(mountPoint)) throw new IllegalStateException(mountPoint + " still mounted");
            deleteTree(dir);
        } catch (RuntimeException e) {
            if (failure == null) failure = e; else failure.addSuppressed(e);
        }
        if (failure != null) throw failure;
    }

    private void unmount() {
        for (int attempt = 0; MountTable.read().isMountPoint(mountPoint); attempt++) {
            try {
                Mounts.unmount(mountPoint, attempt < 50 ? new UnmountFlag[0] : new UnmountFlag[] {UnmountFlag.DETACH});
            } catch (OsException e) {
                if (!e.is(Errno.EBUSY) || attempt >= 50) throw e;
                sleep(100);
            }
        }
    }

    /** Autoclear detaches on unmount; wait for it, and force it if something kept the device. */
    private void releaseLoop() {
        if (device == null) return;
        for (int i = 0; i < 50 && !LoopDevice.findByBackingFile(image).isEmpty(); i++) sleep(20);
        for (LoopDevice leftover : LoopDevice.findByBackingFile(image)) leftover.detach();
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) return;
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException("deleting " + root, e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
