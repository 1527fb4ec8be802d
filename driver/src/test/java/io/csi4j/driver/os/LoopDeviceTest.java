package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LoopDeviceTest {
    @TempDir
    Path dir;

    @BeforeEach
    void root() {
        Privileged.requireRoot();
    }

    /** Whatever a test left mounted or attached under its temp dir goes, even after a failure. */
    @AfterEach
    void cleanUp() {
        for (MountInfo m : MountTable.read().under(dir)) Mounts.unmount(m.mountPoint(), UnmountFlag.DETACH);
        for (LoopDevice d : LoopDevice.list()) {
            if (d.backingFile().startsWith(dir)) d.detach();
        }
    }

    private Path image(String name, long size) throws IOException {
        Path image = dir.resolve(name);
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(size);
        }
        return image.toRealPath();
    }

    /** Detach may finish a moment after the last holder goes (udev on real hosts); poll briefly. */
    private static boolean gone(LoopDevice device) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            Optional<LoopDevice> now = LoopDevice.find(device.number());
            if (now.isEmpty() || !now.get().backingFile().equals(device.backingFile())) return true;
            Thread.sleep(10);
        }
        return false;
    }

    /** LOOP_CONFIGURE's direct IO flag and block size, as the kernel reports them back. */
    @Test
    void attachesWithDirectIoAndALogicalBlockSize() throws Exception {
        Path plainFile = image("plain.img", 8L << 20);
        try (AttachedLoop plain = LoopDevice.attach(plainFile, EnumSet.noneOf(LoopFlag.class))) {
            assertFalse(plain.device().directIo());
            assertEquals(512, plain.device().logicalBlockSize());
        }
        Path directFile = image("direct.img", 8L << 20);
        try (AttachedLoop direct = LoopDevice.attach(directFile, EnumSet.of(LoopFlag.DIRECT_IO), 4096)) {
            // tmpfs cannot do O_DIRECT: the kernel falls back to buffered IO there
            assertEquals(!FsStats.of(dir).type().equals("tmpfs"), direct.device().directIo());
            assertEquals(4096, direct.device().logicalBlockSize());
        }
        assertThrows(IllegalArgumentException.class, () -> LoopDevice.attach(directFile, EnumSet.noneOf(LoopFlag.class), 3000));
    }

    /** Non-empty files are found through /proc/partitions; an empty file (capacity 0, unlisted) by the full scan. */
    @Test
    void findByBackingFileSeesDevicesOfEmptyAndNonEmptyFiles() throws Exception {
        Path full = image("full.img", 4L << 20);
        Path empty = image("empty.img", 0);
        try (AttachedLoop a = LoopDevice.attach(full, EnumSet.noneOf(LoopFlag.class));
             AttachedLoop b = LoopDevice.attach(empty, EnumSet.noneOf(LoopFlag.class))) {
            assertTrue(LoopDevice.withCapacity().contains(a.device().number()));
            assertFalse(LoopDevice.withCapacity().contains(b.device().number()), "the kernel does not list an empty disk");
            assertEquals(List.of(a.device()), LoopDevice.findByBackingFile(full));
            assertEquals(List.of(b.device()), LoopDevice.findByBackingFile(empty));
        }
    }

    @Test
    void attachWithoutAutoclearSurvivesCloseUntilDetach() throws Exception {
        Path image = image("block.img", 64L << 20);
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.noneOf(LoopFlag.class))) {
            device = loop.device();
        }
        assertEquals(Optional.of(device), LoopDevice.find(device.number()), "sysfs agrees with what attach said");
        assertEquals(List.of(device), LoopDevice.findByBackingFile(image));
        assertTrue(LoopDevice.list().contains(device));
        assertEquals(Path.of("/dev/loop" + device.number()), device.node());
        assertFalse(device.readOnly());
        assertFalse(device.autoclear());
        assertEquals(64L << 20, device.size());
        assertEquals(64L << 20, BlockDevice.size(device.node()));

        // the device is a window onto the file
        try (FileChannel dev = FileChannel.open(device.node(), StandardOpenOption.WRITE)) {
            dev.write(ByteBuffer.wrap("through the loop".getBytes()), 4096);
        }
        Durable.fsync(device.node());
        byte[] back = new byte[16];
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "r")) {
            f.seek(4096);
            f.readFully(back);
        }
        assertEquals("through the loop", new String(back));

        assertTrue(device.detach());
        assertTrue(gone(device));
        assertEquals(List.of(), LoopDevice.findByBackingFile(image));
        assertTrue(device.detach(), "detaching again is fine");
    }

    @Test
    void autoclearDeviceDisappearsWhenTheLastHolderCloses() throws Exception {
        Path image = image("autoclear.img", 64L << 20);
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.of(LoopFlag.AUTOCLEAR))) {
            device = loop.device();
            assertTrue(LoopDevice.find(device.number()).orElseThrow().autoclear());
        }
        assertTrue(gone(device), "nothing held it, so the kernel detached it on our close");
    }

    @Test
    void autoclearDeviceLivesAsLongAsItsMount() throws Exception {
        Path image = image("fs.img", 64L << 20);
        Path mountPoint = Files.createDirectory(dir.resolve("mnt"));
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.of(LoopFlag.AUTOCLEAR))) {
            device = loop.device();
            Tools.mkfs("ext4", loop.node(), List.of());
            Mounts.mount(loop.node().toString(), mountPoint, "ext4", Set.of(), null);
        }
        assertEquals(Optional.of(device), LoopDevice.find(device.number()), "the mount holds it");
        MountInfo mount = MountTable.read().at(mountPoint).orElseThrow();
        assertEquals(List.of(mount), MountTable.read().mountsOf(device.node()));
        Path otherNode = dir.resolve("same-device");
        LoopDevice.ensureNode(otherNode, 7, device.number());
        assertEquals(List.of(mount), MountTable.read().mountsOf(otherNode), "found by device number too");
        Files.writeString(mountPoint.resolve("f"), "data");

        Mounts.unmount(mountPoint);

        assertTrue(gone(device), "unmount released the last holder");
    }

    @Test
    void detachOfAMountedDeviceIsDeferredToTheUnmount() throws Exception {
        Path image = image("busy.img", 64L << 20);
        Path mountPoint = Files.createDirectory(dir.resolve("mnt"));
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.noneOf(LoopFlag.class))) {
            device = loop.device();
            Tools.mkfs("ext4", loop.node(), List.of());
        }
        Mounts.mount(device.node().toString(), mountPoint, "ext4", Set.of(), null);

        assertFalse(device.detach(), "still mounted: the kernel only marks it autoclear");
        assertTrue(LoopDevice.find(device.number()).orElseThrow().autoclear());

        Mounts.unmount(mountPoint);
        assertTrue(gone(device));
    }

    @Test
    void readOnlyDeviceRefusesWrites() throws Exception {
        Path image = image("ro.img", 16L << 20);
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.of(LoopFlag.READ_ONLY))) {
            device = loop.device();
            assertTrue(device.readOnly());
            assertTrue(LoopDevice.find(device.number()).orElseThrow().readOnly(), "/sys/block/loopN/ro is 1");
            // Linux lets a read-only block device be opened for writing; the write itself fails
            try (Fd fd = Fd.open(device.node(), Libc.O_RDWR); Arena arena = Arena.ofConfined()) {
                OsException e = assertThrows(OsException.class,
                        () -> Libc.pwrite(fd.fd(), arena.allocate(4096), 4096, 0, device.node()));
                assertEquals(Errno.EPERM, e.errno());
            }
            assertFalse(device.detach(), "we still hold it open: the kernel defers the detach");
        }
        assertTrue(gone(device), "and does it on our close");
    }

    @Test
    void refreshCapacityAfterGrowingTheFile() throws Exception {
        Path image = image("grow.img", 32L << 20);
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.noneOf(LoopFlag.class))) {
            device = loop.device();
        }
        assertEquals(32L << 20, BlockDevice.size(device.node()));
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(96L << 20);
        }
        assertEquals(32L << 20, BlockDevice.size(device.node()), "the loop device does not notice by itself");

        device.refreshCapacity();

        assertEquals(96L << 20, BlockDevice.size(device.node()));
        assertEquals(96L << 20, device.size());
        assertTrue(device.detach());
        OsException e = assertThrows(OsException.class, device::refreshCapacity);
        assertEquals(Errno.ENXIO, e.errno());
    }

    @Test
    void readAheadRoundTrip() throws Exception {
        Path image = image("ra.img", 16L << 20);
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.noneOf(LoopFlag.class))) {
            device = loop.device();
        }
        long original = BlockDevice.readAheadSectors(device.node());
        long wanted = original == 512 ? 1024 : 512;
        BlockDevice.setReadAheadSectors(device.node(), wanted);
        assertEquals(wanted, BlockDevice.readAheadSectors(device.node()));
        String sysfs = Files.readString(Path.of("/sys/block/loop" + device.number() + "/queue/read_ahead_kb")).strip();
        assertEquals(wanted / 2, Long.parseLong(sysfs), "sysfs shows the same value in KiB");
        assertTrue(device.detach());
    }

    @Test
    void deletedBackingFileIsReportedAndNeverMatchesItsOldPath() throws Exception {
        Path image = image("deleted.img", 16L << 20);
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.noneOf(LoopFlag.class))) {
            device = loop.device();
        }
        Files.delete(image);
        image("deleted.img", 16L << 20); // a new file at the same path is not what the device shows

        LoopDevice now = LoopDevice.find(device.number()).orElseThrow();
        assertTrue(now.backingFileDeleted());
        assertEquals(image, now.backingFile(), "the \" (deleted)\" suffix is stripped");
        assertEquals(List.of(), LoopDevice.findByBackingFile(image));

        assertTrue(device.detach(), "our record no longer matches: the binding it names is gone");
        assertTrue(LoopDevice.find(device.number()).isPresent(), "so it was left alone");
        assertTrue(now.detach());
        assertTrue(gone(now));
    }

    @Test
    void concurrentAttachersGetDistinctDevices() throws Exception {
        int n = 6;
        List<Path> images = new ArrayList<>();
        for (int i = 0; i < n; i++) images.add(image("c" + i + ".img", 8L << 20));
        List<AttachedLoop> attached = new ArrayList<>();
        try (var pool = Executors.newFixedThreadPool(n)) {
            List<Callable<AttachedLoop>> tasks = images.stream()
                    .<Callable<AttachedLoop>>map(img -> () -> LoopDevice.attach(img, EnumSet.noneOf(LoopFlag.class)))
                    .toList();
            for (Future<AttachedLoop> f : pool.invokeAll(tasks)) attached.add(f.get());
        } finally {
            Set<Integer> numbers = new HashSet<>();
            for (AttachedLoop loop : attached) {
                numbers.add(loop.device().number());
                assertEquals(loop.device().backingFile(),
                        LoopDevice.find(loop.device().number()).orElseThrow().backingFile());
                loop.close();
                loop.device().detach();
            }
            assertEquals(attached.size(), numbers.size());
        }
        assertEquals(n, attached.size());
    }

    @Test
    void deviceNodeIsCreatedWhenMissing() throws Exception {
        Path node = dir.resolve("loop42");
        LoopDevice.ensureNode(node, 7, 42);
        FileStat stat = FileStat.of(node);
        assertTrue(stat.isBlockDevice());
        assertEquals(7, stat.rdevMajor());
        assertEquals(42, stat.rdevMinor());
        LoopDevice.ensureNode(node, 7, 42); // there already: nothing to do

        assertThrows(IllegalStateException.class, () -> LoopDevice.ensureNode(node, 7, 43));
        Path file = Files.writeString(dir.resolve("not-a-node"), "x");
        assertThrows(IllegalStateException.class, () -> LoopDevice.ensureNode(file, 7, 1));

        // a node we made works like the one devtmpfs made
        Path image = image("node.img", 8L << 20);
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(image, EnumSet.noneOf(LoopFlag.class))) {
            device = loop.device();
        }
        Path own = dir.resolve("own-loop" + device.number());
        FileStat devtmpfs = FileStat.of(device.node());
        LoopDevice.ensureNode(own, devtmpfs.rdevMajor(), devtmpfs.rdevMinor());
        assertEquals(8L << 20, BlockDevice.size(own));
        assertTrue(device.detach());
    }

    @Test
    void makedevMatchesGlibc() {
        assertEquals(0x0703L, LoopDevice.makedev(7, 3));
        assertEquals(0x10_07FFL, LoopDevice.makedev(7, 0x1FF)); // minor bits above 8 go to bit 20
        assertEquals((0x1000L << 32) | 0x0005L, LoopDevice.makedev(0x1000, 5));
    }

    @Test
    void attachOfAMissingFileFails() {
        assertThrows(java.io.UncheckedIOException.class,
                () -> LoopDevice.attach(dir.resolve("missing.img"), EnumSet.noneOf(LoopFlag.class)));
    }
}
