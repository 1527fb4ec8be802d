package io.csi4j.cli.reliability;

import io.csi4j.driver.os.Mounts;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A disk that can lose its power, without device-mapper: a data directory on an XFS filesystem made on a
 * <em>buffered</em> loop device, whose backing file (the "disk") lives on an outer XFS with reflink (itself a
 * loop image that this class makes). {@link #cut()} clones the disk with FICLONE ({@code cp --reflink=always}):
 * XFS takes the file's IO lock and writes back the dirty pages the loop device had completed before it shares
 * the extents, so the clone holds what had reached the device, and nothing the inner filesystem still held in
 * memory (its page cache, its unwritten log buffers). {@link #powerOff()} then takes the old machine down
 * (every mount and loop device under the root, the disk deleted) and {@link #powerOn} mounts the clone at the
 * same place ({@code -o nouuid}: the log is replayed as after a reboot).
 *
 * <p>Stronger than a real disk: a write the loop completed but nobody flushed is in the clone; a disk with a
 * volatile write cache may lose it (see docs/power-cut.md). Everything lives under {@code root}: {@code
 * outer.img}, {@code outer/} (its mount, holding {@code disk-N.img}), {@code data/} (the inner filesystem) and
 * whatever the caller puts there (a kubelet directory). {@link #cleanUp} removes what a killed run left. Public for
 * the cluster suite ({@code cluster/PowerCutClusterTest}), whose target agent serves from such a disk.
 */
public final class PowerCut implements AutoCloseable {
    public final Path root, outer, data;
    private Path disk;
    private int generation;

    private PowerCut(Path root) {
        this.root = root;
        this.outer = root.resolve("outer");
        this.data = root.resolve("data");
    }

    /** Makes the outer filesystem ({@code 3 x diskBytes}) and the inner one ({@code diskBytes}), mounted at {@link #data}. */
    public static PowerCut create(Path root, long diskBytes) throws IOException {
        cleanUp(root);
        PowerCut cut = new PowerCut(root);
        Files.createDirectories(cut.outer);
        Files.createDirectories(cut.data);
        Files.createDirectories(root.resolve("fsck-mnt"));
        Path outerImage = root.resolve("outer.img");
        sparse(outerImage, 3 * diskBytes);
        run("mkfs.xfs", "-q", "-f", "-m", "reflink=1", outerImage.toString());
        run("mount", "-o", "loop", outerImage.toString(), cut.outer.toString());
        cut.disk = cut.outer.resolve("disk-0.img");
        sparse(cut.disk, diskBytes);
        run("mkfs.xfs", "-q", "-m", "reflink=1", cut.disk.toString());
        run("mount", "-o", "loop", cut.disk.toString(), cut.data.toString());
        return cut;
    }

    /** The power cut: a clone of the disk as it is now (what reached the device), returned as the next disk. */
    public Path cut() throws IOException {
        Path copy = outer.resolve("disk-" + (++generation) + ".img");
        run("cp", "--reflink=always", disk.toString(), copy.toString());
        return copy;
    }

    /**
     * The old machine goes down for good, after the caller stopped its processes: every mount under the root but
     * the outer one, every loop device whose file is under {@link #data}, the inner filesystem, and the old disk.
     */
    public void powerOff() throws IOException {
        unmountAll(root, List.of(outer));
        Files.deleteIfExists(disk);
    }

    /** Boots on {@code copy}: mounted at {@link #data} (log replay); it is the disk from now on. */
    public void powerOn(Path copy) throws IOException {
        disk = copy;
        run("mount", "-o", "loop,nouuid", copy.toString(), data.toString());
    }

    /**
     * Checks the filesystem ({@code ext4} or {@code xfs}) in a volume image on the booted disk without touching it:
     * a reflink copy beside the pool, mounted once to replay its journal as the next stage would, then checked
     * through a read-only loop ({@code fsck.ext4 -n -f} / {@code xfs_repair -n}). Null when clean, else the
     * checker's output. Run it with no plugin serving the disk.
     */
    String checkFilesystem(Path image, String fsType) throws IOException {
        Path scratch = data.resolve("fsck-scratch.img");
        Path mountPoint = Files.createDirectories(root.resolve("fsck-mnt"));
        run("cp", "--reflink=always", image.toString(), scratch.toString());
        String loop = null;
        try {
            loop = run("losetup", "-f", "--show", scratch.toString()).strip();
            try {
                run("mount", "-t", fsType, "-o", fsType.equals("xfs") ? "nouuid" : "defaults", loop, mountPoint.toString());
            } catch (IOException unmountable) {
                return "cannot be mounted (journal replay failed): " + unmountable.getMessage();
            }
            run("umount", mountPoint.toString());
            run("losetup", "-d", loop);
            loop = run("losetup", "-r", "-f", "--show", scratch.toString()).strip();
            try {
                if (fsType.equals("xfs")) run("xfs_repair", "-n", loop); else run("fsck.ext4", "-n", "-f", loop);
                return null;
            } catch (IOException unclean) {
                return unclean.getMessage();
            }
        } finally {
            if (loop != null) detach(loop.substring("/dev/".length()) + "=");
            Files.deleteIfExists(scratch);
        }
    }

    /**
     * A report on the XFS in a volume image that would not mount, for a failure's message: the image's size, the
     * primary superblock's geometry, {@code xfs_repair -n} (through a read-only loop on a reflink copy) and the
     * kernel's last XFS messages (log recovery's reason). Safe with a plugin serving the disk.
     */
    String describeXfs(Path image) throws IOException {
        StringBuilder out = new StringBuilder("image " + image.getFileName() + ": " + Files.size(image) + " bytes");
        Path scratch = data.resolve("diagnosis-scratch.img");
        run("cp", "--reflink=always", image.toString(), scratch.toString());
        String loop = null;
        try {
            out.append("\nsb 0: ").append(tool("xfs_db", "-r", "-c", "sb 0", "-c", "p dblocks agcount agblocks", scratch.toString())
                    .replace('\n', ' '));
            loop = run("losetup", "-r", "-f", "--show", scratch.toString()).strip();
            out.append("\nxfs_repair -n:\n").append(tool("xfs_repair", "-n", loop).strip().indent(2));
            out.append("xfs_logprint -t (tail):\n").append(tail(tool("xfs_logprint", "-t", loop), 30).indent(2));
        } finally {
            if (loop != null) detach(loop.substring("/dev/".length()) + "=");
            Files.deleteIfExists(scratch);
        }
        out.append("kernel (last XFS lines):\n").append(tail(tool("dmesg").lines().filter(l -> l.contains("XFS"))
                .reduce("", (a, b) -> a + b + "\n"), 15).indent(2));
        return out.toString();
    }

    /** A tool's output whether it succeeded or not (a checker's findings are its point). */
    private static String tool(String... command) throws IOException {
        try {
            return run(command);
        } catch (IOException failed) {
            return failed.getMessage();
        }
    }

    private static String tail(String text, int lines) {
        List<String> all = text.lines().toList();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    /** The disk's file, for a test that wants to look at it. */
    Path disk() {
        return disk;
    }

    @Override
    public void close() throws IOException {
        cleanUp(root);
    }

    /** Removes every mount and loop device under {@code root} (deepest first), then the files. Safe on a fresh root. */
    public static void cleanUp(Path root) throws IOException {
        unmountAll(root, List.of());
        if (!Leaks.mountsUnder(root, null).isEmpty() || !Leaks.loopsUnder(root).isEmpty()) {
            throw new IOException("power-cut clean-up left " + Leaks.mountsUnder(root, null) + " " + Leaks.loopsUnder(root));
        }
        if (Files.exists(root)) {
            try (var files = Files.walk(root)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
    }

    /**
     * Unmounts everything under {@code dir} but {@code keep}, deepest first, detaching the loop devices whose file
     * is under a directory before that directory's filesystem goes (a block volume's loop holds it busy).
     */
    private static void unmountAll(Path dir, List<Path> keep) throws IOException {
        int rounds = 10;   // a process that just died, or a loop device's autoclear, may hold a file for a moment
        for (int round = 0; round < rounds; round++) {
            if (round > 0) pause(Math.min(1000, 200L * round));
            List<Path> mounts = new ArrayList<>(Leaks.mountsUnder(dir, null));
            mounts.removeAll(keep);
            if (mounts.isEmpty() && loopsOutside(dir, keep).isEmpty()) return;
            mounts.sort(Comparator.comparingInt(Path::getNameCount).reversed());
            for (Path m : mounts) {
                detachLoopsUnder(m);
                thaw(m);
                try {
                    Mounts.unmount(m);
                } catch (RuntimeException e) {
                    if (round == rounds - 1) throw new IOException("cannot unmount " + m + ": " + e.getMessage(), e);
                }
            }
            for (String loop : loopsOutside(dir, keep)) {
                detach(loop);
                thawLingering(dir, loop);
            }
        }
    }

    /**
     * A filesystem the plugin froze (a snapshot's or group snapshot's freeze, cut short) must be thawed before its
     * unmount, or its superblock outlives the mount, frozen and invisible, and keeps its loop device and the disk
     * busy. A real power cut forgets the freeze; the old machine here must be taken down the same.
     */
    private static void thaw(Path mountPoint) {
        try {
            run("fsfreeze", "-u", mountPoint.toString());
        } catch (IOException notFrozen) {
            // EINVAL: not frozen, the usual case
        }
    }

    /** A loop device still attached after its mounts went: a frozen superblock; mount it once more to thaw it. */
    private static void thawLingering(Path dir, String loop) {
        String device = "/dev/" + loop.substring(0, loop.indexOf('='));
        Path spare = dir.resolve("fsck-mnt");
        try {
            if (!Files.exists(Path.of("/sys/block", device.substring(5), "loop")) || !Files.isDirectory(spare)) return;
            run("mount", device, spare.toString());
            thaw(spare);
            run("umount", spare.toString());
        } catch (IOException e) {
            // not a lingering superblock (unformatted, or already gone)
        }
    }

    private static List<String> loopsOutside(Path dir, List<Path> keep) {
        List<String> loops = new ArrayList<>(Leaks.loopsUnder(dir));
        // the outer image's own loop goes with the outer mount; loops of files inside it do not
        if (!keep.isEmpty()) loops.removeIf(l -> l.endsWith("=" + dir.resolve("outer.img")));
        return loops;
    }

    private static void detachLoopsUnder(Path dir) {
        for (String loop : Leaks.loopsUnder(dir)) detach(loop);
    }

    private static void detach(String loop) {
        try {
            run("losetup", "-d", "/dev/" + loop.substring(0, loop.indexOf('=')));
        } catch (IOException e) {
            System.err.println("power cut: " + e.getMessage());   // autoclear got there first, or busy: the next round retries
        }
    }

    private static void pause(long millis) throws IOException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private static void sparse(Path file, long bytes) throws IOException {
        try (var f = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            f.write(ByteBuffer.allocate(1), bytes - 1);
        }
    }

    /** Runs a tool to its end (two minutes at most); its output if it exits 0, else an IOException with it. */
    public static String run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String out;
            try (var in = p.getInputStream()) {
                out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish");
            }
            if (p.exitValue() != 0) throw new IOException(String.join(" ", command) + " exit " + p.exitValue() + ": " + out.strip());
            return out;
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", command), e);
        }
    }
}
