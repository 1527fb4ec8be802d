package io.csi4j.driver.os;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A bound loop device, as the kernel reports it in /sys/block/loopN. {@code backingFile} is the path
 * the kernel shows; when that file has been unlinked the kernel appends " (deleted)", which is
 * stripped here and reported as {@code backingFileDeleted}. Needs Linux >= 5.8 (LOOP_CONFIGURE).
 */
public record LoopDevice(int number, Path node, Path backingFile, boolean backingFileDeleted,
                         boolean readOnly, boolean autoclear) {

    private static final Path LOOP_CONTROL = Path.of("/dev/loop-control");
    private static final Path DEV = Path.of("/dev");
    private static final Path SYS_BLOCK = Path.of("/sys/block");
    /**
     * Where the loop devices' sysfs directories really are (/sys/block/loopN links there): reading
     * through the link costs a symlink walk and a kernfs revalidation per attribute.
     */
    private static final Path SYS_LOOPS = Files.isDirectory(Path.of("/sys/devices/virtual/block"))
            ? Path.of("/sys/devices/virtual/block") : SYS_BLOCK;
    private static final Path PARTITIONS = Path.of("/proc/partitions");
    private static final String DELETED = " (deleted)";

    private static final long LOOP_CLR_FD = 0x4C01L;
    private static final long LOOP_SET_CAPACITY = 0x4C07L;
    private static final long LOOP_CONFIGURE = 0x4C0AL;
    private static final long LOOP_CTL_GET_FREE = 0x4C82L;
    private static final int S_IFBLK = 0060000;
    private static final int S_IFCHR = 0020000;
    private static final int LOOP_CONTROL_MAJOR = 10;  // misc
    private static final int LOOP_CONTROL_MINOR = 237; // LOOP_CTRL_MINOR
    private static final int ATTACH_ATTEMPTS = 32;
    private static final AtomicLong ATTACHES_STARTED = new AtomicLong();
    private static final AtomicLong ATTACHES_FINISHED = new AtomicLong();

    /**
     * Binds {@code file} to a free loop device. Another process may grab the same free device between
     * LOOP_CTL_GET_FREE and LOOP_CONFIGURE; the loser gets EBUSY, so we ask for another one. The device
     * node is created (mknod b 7 N) when /dev has none, as in containers with a static /dev.
     */
    public static AttachedLoop attach(Path file, Set<LoopFlag> flags) {
        return attach(file, flags, 0);
    }

    /**
     * As {@link #attach(Path, Set)} with the device's logical block size: 0 is the kernel's default (512, or
     * with direct IO the backing device's); 512, 1024, 2048 or 4096 set it (LOOP_CONFIGURE's block_size).
     * A filesystem whose sector size is smaller than the device's block size no longer mounts.
     */
    public static AttachedLoop attach(Path file, Set<LoopFlag> flags, int blockSize) {
        ATTACHES_STARTED.incrementAndGet();
        try {
            return attachCounted(file, flags, blockSize);
        } finally {
            ATTACHES_FINISHED.incrementAndGet();
        }
    }

    /**
     * How many attaches this process has started, when none is running now; -1 while one is. Read before a look at
     * the bound devices, and compared with {@link #attachesStarted()} later: equal means no device was bound by this
     * process since the look began (one running as it began could have finished after it, hence -1).
     */
    public static long quietAttaches() {
        long finished = ATTACHES_FINISHED.get();   // first: an attach started before this read makes started differ
        long started = ATTACHES_STARTED.get();
        return started == finished ? started : -1;
    }

    /** How many attaches this process has started. */
    public static long attachesStarted() {
        return ATTACHES_STARTED.get();
    }

    private static AttachedLoop attachCounted(Path file, Set<LoopFlag> flags, int blockSize) {
        if (blockSize != 0 && (blockSize < 512 || blockSize > 4096 || Integer.bitCount(blockSize) != 1)) {
            throw new IllegalArgumentException("loop block size must be 0, 512, 1024, 2048 or 4096: " + blockSize);
        }
        Path backing = realPath(file);
        boolean readOnly = flags.contains(LoopFlag.READ_ONLY);
        ensureNode(LOOP_CONTROL, S_IFCHR, LOOP_CONTROL_MAJOR, LOOP_CONTROL_MINOR);
        try (Fd control = Fd.open(LOOP_CONTROL, Libc.O_RDWR);
             Fd backingFd = Fd.open(backing, readOnly ? Libc.O_RDONLY : Libc.O_RDWR)) {
            for (int attempt = 1; ; attempt++) {
                int number = control.ioctl(LOOP_CTL_GET_FREE, 0, "ioctl(LOOP_CTL_GET_FREE)");
                Path node = ensureNode(number);
                try {
                    Fd hold = configure(node, backingFd, backing, LoopFlag.bits(flags), blockSize);
                    return new AttachedLoop(new LoopDevice(number, node, backing, false, readOnly,
                            flags.contains(LoopFlag.AUTOCLEAR)), hold);
                } catch (OsException e) {
                    boolean lostRace = e.is(Errno.EBUSY) || e.is(Errno.ENXIO);
                    if (!lostRace || attempt == ATTACH_ATTEMPTS) throw e;
                }
            }
        }
    }

    /**
     * LOOP_CONFIGURE through a read-write descriptor (the kernel makes the device read-only when the
     * configuring descriptor can't write). Returns a read-only descriptor as the holder: a writer
     * would block mounts on kernels built without CONFIG_BLK_DEV_WRITE_MOUNTED.
     */
    private static Fd configure(Path node, Fd backingFd, Path backing, int loFlags, int blockSize) {
        try (Fd writer = Fd.open(node, Libc.O_RDWR); Arena arena = Arena.ofConfined()) {
            // struct loop_config { u32 fd; u32 block_size; struct loop_info64 info; u64 reserved[8]; }
            // loop_info64: lo_flags at +52, lo_file_name[64] at +56; block size 0 = kernel default
            MemorySegment config = arena.allocate(304, 8);
            config.set(JAVA_INT, 0, backingFd.fd());
            config.set(JAVA_INT, 4, blockSize);
            config.set(JAVA_INT, 8 + 52, loFlags);
            byte[] name = backing.toString().getBytes(UTF_8);
            MemorySegment.copy(name, 0, config, JAVA_BYTE, 8 + 56, Math.min(name.length, 63));
            writer.ioctl(LOOP_CONFIGURE, config, "ioctl(LOOP_CONFIGURE)");
            try {
                // a fence's BLKROSET outlives the detach of the device's last user: never inherit it (a read-only
                // attachment stays read-only through LO_FLAGS_READ_ONLY, the disk's own flag)
                BlockDevice.setReadOnly(writer, false);
                return Fd.open(node, Libc.O_RDONLY);
            } catch (RuntimeException e) {
                try {
                    writer.ioctl(LOOP_CLR_FD, 0, "ioctl(LOOP_CLR_FD)"); // don't leak a device nobody knows
                } catch (RuntimeException undo) {
                    e.addSuppressed(undo);
                }
                throw e;
            }
        }
    }

    /** Every bound loop device, by number. */
    public static List<LoopDevice> list() {
        List<LoopDevice> devices = new ArrayList<>();
        for (int number : numbers()) find(number).ifPresent(devices::add);
        devices.sort(Comparator.comparingInt(LoopDevice::number));
        return devices;
    }

    /**
     * The bound loop devices of non-zero capacity (every device bound to a non-empty file), from
     * /proc/partitions: one read to find them instead of a look at every /sys/block/loopN.
     */
    public static List<LoopDevice> listWithCapacity() {
        List<LoopDevice> devices = new ArrayList<>();
        for (int number : withCapacity()) find(number).ifPresent(devices::add);
        devices.sort(Comparator.comparingInt(LoopDevice::number));
        return devices;
    }

    private static List<Integer> numbers() {
        List<Integer> numbers = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(SYS_BLOCK, "loop[0-9]*")) {
            for (Path dir : dirs) numbers.add(Integer.parseInt(dir.getFileName().toString().substring(4)));
        } catch (IOException e) {
            throw new UncheckedIOException("listing " + SYS_BLOCK, e);
        }
        return numbers;
    }

    private static boolean isEmpty(Path file) {
        try {
            return Files.size(file) == 0;
        } catch (IOException e) {
            return true; // gone or unreadable: look everywhere
        }
    }

    /** Loop devices whose capacity is not zero, by number, as /proc/partitions lists them. */
    static List<Integer> withCapacity() {
        String table;
        try {
            table = KernelFile.read(PARTITIONS);
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + PARTITIONS, e);
        }
        List<Integer> numbers = new ArrayList<>();
        // lines are "major minor #blocks name"; the name is the last field
        for (int at = table.indexOf(" loop"); at >= 0; at = table.indexOf(" loop", at + 5)) {
            int end = at + 5;
            while (end < table.length() && Character.isDigit(table.charAt(end))) end++;
            boolean wholeName = end > at + 5 && (end == table.length() || table.charAt(end) == '\n');
            if (wholeName) numbers.add(Integer.parseInt(table, at + 5, end, 10));
        }
        return numbers;
    }

    /** Loop device N if it is bound to a file. */
    public static Optional<LoopDevice> find(int number) {
        Path sys = SYS_LOOPS.resolve("loop" + number);
        try {
            Optional<String> read = backingFileOf(sys);
            if (read.isEmpty()) return Optional.empty();
            String backing = read.get();
            boolean deleted = backing.endsWith(DELETED);
            if (deleted) backing = backing.substring(0, backing.length() - DELETED.length());
            boolean readOnly = "1".equals(stripNewline(Files.readString(sys.resolve("ro"))));
            boolean autoclear = "1".equals(stripNewline(Files.readString(sys.resolve("loop/autoclear"))));
            return Optional.of(new LoopDevice(number, DEV.resolve("loop" + number), Path.of(backing), deleted,
                    readOnly, autoclear));
        } catch (NoSuchFileException e) {
            return Optional.empty(); // detached while reading
        } catch (IOException e) {
            if (Files.notExists(sys.resolve("loop")) || "No such device".equals(e.getMessage())) return Optional.empty(); // detached while reading
            throw new UncheckedIOException("reading " + sys, e);
        }
    }

    /**
     * The backing file as the kernel shows it, or empty when the device is not bound: {@code loop/} exists
     * only while it is. Checked first because a scan meets mostly unbound devices, and an exists test is
     * much cheaper than reading and failing (a NoSuchFileException with its stack trace each).
     */
    private static Optional<String> backingFileOf(Path sys) throws IOException {
        Path file = sys.resolve("loop/backing_file");
        try {   // read, not checked first: one syscall less per loop device, and absence shows the same way
            return Optional.of(stripNewline(KernelFile.read(file)));
        } catch (NoSuchFileException e) {
            return Optional.empty(); // detached meanwhile
        } catch (IOException e) {
            // kernfs answers ENODEV for an attribute being removed: the device is being detached right now
            if (Files.notExists(file) || "No such device".equals(e.getMessage())) return Optional.empty();
            throw e;
        }
    }

    /**
     * Loop devices bound to this file (by its current path; a deleted file never matches). For a file that
     * is not empty, only the devices /proc/partitions lists are looked at: one read instead of a walk of
     * every /sys/block/loopN (the kernel lists a disk there when its capacity is not zero, and a device
     * bound to a non-empty file has the file's size, or the size it had when bound or last refreshed).
     */
    public static List<LoopDevice> findByBackingFile(Path file) {
        return findByCanonicalBackingFile(MountTable.canonical(file));
    }

    /**
     * As {@link #findByBackingFile} for a path that is canonical already (absolute, no symlink in it, as the
     * engines' pool paths are): no resolving of every component first. DeleteVolume asks twice per call.
     */
    public static List<LoopDevice> findByCanonicalBackingFile(Path wanted) {
        return bound(wanted, false);
    }

    /**
     * As {@link #findByCanonicalBackingFile}, and also the devices still bound to a file that was at this path and has
     * been unlinked or renamed over since (the kernel shows it " (deleted)"): whatever a mount of them serves, they
     * are a use of what the path names. The in-use checks ask this; a device bound to a deleted non-empty file keeps
     * that file's size, so the capacity shortcut still sees it.
     */
    public static List<LoopDevice> findUsingCanonicalPath(Path wanted) {
        return bound(wanted, true);
    }

    private static List<LoopDevice> bound(Path wanted, boolean alsoDeleted) {
        String name = wanted.toString();
        String deletedName = name + DELETED;
        List<LoopDevice> found = new ArrayList<>();
        for (int number : isEmpty(wanted) ? numbers() : withCapacity()) {
            try {
                // compare the one attribute first; the full record only for a match
                if (backingFileOf(SYS_LOOPS.resolve("loop" + number))
                        .filter(b -> b.equals(name) || (alsoDeleted && b.equals(deletedName))).isEmpty()) continue;
            } catch (IOException e) {
                throw new UncheckedIOException("reading " + SYS_LOOPS.resolve("loop" + number), e);
            }
            find(number).filter(d -> (alsoDeleted || !d.backingFileDeleted()) && d.backingFile().equals(wanted)).ifPresent(found::add);
        }
        found.sort(Comparator.comparingInt(LoopDevice::number));
        return found;
    }

    /**
     * Whether the kernel really does direct IO on the backing file now ({@code loop/dio}): asking for
     * {@link LoopFlag#DIRECT_IO} falls back to buffered IO when the backing file cannot do it (tmpfs).
     */
    public boolean directIo() {
        return "1".equals(sysAttribute("loop/dio"));
    }

    /** The device's logical block size in bytes ({@code queue/logical_block_size}). */
    public int logicalBlockSize() {
        return Integer.parseInt(sysAttribute("queue/logical_block_size"));
    }

    private String sysAttribute(String name) {
        Path file = SYS_LOOPS.resolve("loop" + number).resolve(name);
        try {
            return stripNewline(KernelFile.read(file));
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + file, e);
        }
    }

    /** Size of the device in bytes. */
    public long size() {
        return BlockDevice.size(node);
    }

    /** Makes the device pick up a new size of its backing file (LOOP_SET_CAPACITY). */
    public void refreshCapacity() {
        try (Fd fd = openIfStillOurs()) {
            if (fd == null) throw new OsException("ioctl(LOOP_SET_CAPACITY)", node, Errno.ENXIO);
            fd.ioctl(LOOP_SET_CAPACITY, 0, "ioctl(LOOP_SET_CAPACITY)");
        }
    }

    /**
     * Unbinds the device (LOOP_CLR_FD). Returns true when it is free now (or was already gone); false
     * when it is still in use (mounted, open): the kernel then detaches it on the last close.
     */
    public boolean detach() {
        try (Fd fd = openIfStillOurs()) {
            if (fd == null) return true;
            fd.ioctl(LOOP_CLR_FD, 0, "ioctl(LOOP_CLR_FD)");
        } catch (OsException e) {
            if (!e.is(Errno.ENXIO)) throw e; // ENXIO: already unbound
        }
        Optional<LoopDevice> now = find(number);
        if (now.isEmpty()) clearReadOnlyWhileFree(number);
        return now.map(n -> !sameBinding(n)).orElse(true);
    }

    /**
     * Refuses every later write(2) through the device node (BLKROSET, see {@link BlockDevice#setReadOnly}): a fenced
     * block volume's publication answers EPERM to its writer, an open descriptor included. Returns false when our
     * binding is gone. Cleared by the next attach of this loop number, and by {@link #detach} when the device is free
     * at once (not when the kernel detaches it later, at its last close: it stays read-only until reused by us).
     */
    public boolean refuseWrites() {
        try (Fd fd = openIfStillOurs()) {
            if (fd == null) return false;
            BlockDevice.setReadOnly(fd, true);
            return true;
        }
    }

    /** A free device left read-only by a fence is made writable again, for whoever attaches it next (not only us). */
    private static void clearReadOnlyWhileFree(int number) {
        try (Fd fd = Fd.open(ensureNode(number), Libc.O_RDONLY)) {
            if (find(number).isEmpty()) BlockDevice.setReadOnly(fd, false);   // not bound by anyone meanwhile
        } catch (RuntimeException e) {
            // best effort: our own attach clears it anyway
        }
    }

    /**
     * Opens the node if it is still bound to our backing file. Holding the descriptor keeps the device
     * from being torn down and rebound by someone else until we close it, so the ioctl that follows
     * cannot hit a stranger's device. Returns null when our binding is gone.
     */
    private Fd openIfStillOurs() {
        if (find(number).filter(this::sameBinding).isEmpty()) return null;
        Fd fd;
        try {
            fd = Fd.open(ensureNode(number), Libc.O_RDONLY);
        } catch (OsException e) {
            if (e.is(Errno.ENOENT) || e.is(Errno.ENXIO)) return null;
            throw e;
        } catch (UncheckedIOException e) {
            return null; // sysfs entry vanished: the device was removed
        }
        if (find(number).filter(this::sameBinding).isPresent()) return fd;
        fd.close();
        return null;
    }

    private boolean sameBinding(LoopDevice now) {
        return now.backingFile().equals(backingFile) && now.backingFileDeleted() == backingFileDeleted;
    }

    private static Path ensureNode(int number) {
        String majorMinor;
        try {
            majorMinor = stripNewline(Files.readString(SYS_BLOCK.resolve("loop" + number).resolve("dev")));
        } catch (IOException e) {
            throw new UncheckedIOException("reading /sys/block/loop" + number + "/dev", e);
        }
        String[] parts = majorMinor.split(":");
        Path node = DEV.resolve("loop" + number);
        ensureNode(node, Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
        return node;
    }

    /** Creates a block device node unless one with this device number is there already. */
    static void ensureNode(Path node, int major, int minor) {
        ensureNode(node, S_IFBLK, major, minor);
    }

    private static void ensureNode(Path node, int type, int major, int minor) {
        try {
            FileStat stat = FileStat.of(node);
            if ((stat.mode() & 0170000) == type && stat.rdevMajor() == major && stat.rdevMinor() == minor) return;
            throw new IllegalStateException(node + " exists but is not device " + major + ":" + minor);
        } catch (OsException e) {
            if (!e.is(Errno.ENOENT)) throw e;
        }
        try {
            Libc.mknod(node, type | 0660, makedev(major, minor));
        } catch (OsException e) {
            if (!e.is(Errno.EEXIST)) throw e; // a concurrent attacher or udev made it
        }
    }

    /** glibc's makedev(3) encoding of a dev_t. */
    static long makedev(int major, int minor) {
        long ma = Integer.toUnsignedLong(major);
        long mi = Integer.toUnsignedLong(minor);
        return ((ma & 0xfffL) << 8) | ((ma & 0xfffff000L) << 32) | (mi & 0xffL) | ((mi & 0xffffff00L) << 12);
    }

    private static Path realPath(Path file) {
        try {
            return file.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException("loop backing file " + file, e);
        }
    }

    private static String stripNewline(String s) {
        return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
    }
}
