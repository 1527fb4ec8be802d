package io.csi4j.driver.reconcile;

import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.storage.DataDir;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What a stopped plugin leaves in the kernel for one data directory, and its removal ({@code csi4j teardown}).
 * The catalog does not record staging or target paths (the kubelet owns them; the node side reads the mount
 * table, docs/design.md), so what is ours is read from the kernel: loop devices whose backing file lies in the
 * data directory, mounts of those devices (stages, publishes and their propagated copies wherever they are), binds
 * of their device nodes (block publishes), binds of a directory pool's subdirectories, and mounts under the data
 * directory (the pool). Nothing in the data directory is deleted here.
 *
 * <p>Order: volume mounts (newest first, so stacked and propagated copies come off), then mounts under the data
 * directory other than the pool, then the volumes' loop devices, then the pool, then its loop device. After every
 * step the tables are read again (an unmount propagates; a loop with autoclear goes with its last mount).
 */
public final class NodeTeardown {
    private NodeTeardown() {}

    /** One thing to remove. */
    public sealed interface Step {
        /** The kernel object it removes, for the log line and to skip it after a failure. */
        String target();
    }

    public record Unmount(Path mountPoint, String source) implements Step {
        @Override public String target() { return mountPoint.toString(); }
    }

    public record Detach(LoopDevice loop) implements Step {
        @Override public String target() { return loop.node().toString(); }
    }

    /** What was removed and what could not be (each with the reason). */
    public record Report(List<String> removed, List<String> failed) {}

    /**
     * The steps left, in order, from the tables as they are ({@code dataDir} canonical, as mountinfo and sysfs
     * show paths; {@code poolDirectory}: the mount identity of {@code <data-dir>/pool} when it is a plain directory
     * of a bigger filesystem, else null). Pure: the rules only.
     */
    public static List<Step> plan(Path dataDir, MountTable table, List<LoopDevice> loops, PoolDirectory poolDirectory) {
        Path pool = dataDir.resolve(DataDir.POOL);
        Path poolImage = dataDir.resolve(DataDir.POOL_IMAGE);
        List<LoopDevice> ours = loops.stream().filter(l -> l.backingFile().startsWith(dataDir)).toList();
        Set<Integer> numbers = new HashSet<>();
        Set<String> nodeRoots = new HashSet<>();
        for (LoopDevice l : ours) {
            numbers.add(l.number());
            nodeRoots.add("/" + l.node().getFileName());
        }
        List<Step> steps = new ArrayList<>();
        List<MountInfo> newestFirst = table.mounts().reversed();
        // 1. volume mounts outside the data directory
        for (MountInfo m : newestFirst) {
            if (m.mountPoint().startsWith(dataDir)) continue;
            boolean ofOurLoop = (m.major() == LOOP_MAJOR && numbers.contains(m.minor())) || ours.stream().anyMatch(l -> m.source().equals(l.node().toString()));
            boolean ofOurNode = DEVICE_FILESYSTEMS.contains(m.fsType()) && nodeRoots.contains(m.root());
            boolean ofOurPoolDirectory = poolDirectory != null && poolDirectory.covers(m);
            if (ofOurLoop || ofOurNode || ofOurPoolDirectory) steps.add(new Unmount(m.mountPoint(), m.source()));
        }
        // 2. mounts under the data directory other than the pool, deepest first (not the data directory itself: a disk
        // of its own mounted there is the operator's)
        List<MountInfo> inside = newestFirst.stream().filter(m -> m.mountPoint().startsWith(dataDir)
                        && !m.mountPoint().equals(dataDir) && !m.mountPoint().equals(pool))
                .sorted(Comparator.comparingInt((MountInfo m) -> -m.mountPoint().getNameCount())).toList();
        inside.forEach(m -> steps.add(new Unmount(m.mountPoint(), m.source())));
        // 3. the volumes' loop devices; 4. the pool; 5. the pool's loop device
        ours.stream().filter(l -> !l.backingFile().equals(poolImage)).forEach(l -> steps.add(new Detach(l)));
        newestFirst.stream().filter(m -> m.mountPoint().equals(pool)).forEach(m -> steps.add(new Unmount(m.mountPoint(), m.source())));
        ours.stream().filter(l -> l.backingFile().equals(poolImage)).forEach(l -> steps.add(new Detach(l)));
        return steps;
    }

    /** A directory pool's place in its filesystem: binds of it or below it are the pool's. */
    public record PoolDirectory(int major, int minor, String root) {
        boolean covers(MountInfo m) {
            return m.major() == major && m.minor() == minor
                    && (m.root().equals(root) || m.root().startsWith(root.equals("/") ? "/" : root + "/"));
        }
    }

    /**
     * Removes every step of {@link #plan}, reading the tables again after each; a step that fails is reported and
     * not tried again (what depends on it then fails too, and says so). Bounded: never more steps than
     * {@code 4 * (first plan's size) + 16}.
     */
    public static Report run(Supplier<List<Step>> planner, Consumer<String> log) {
        List<String> removed = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        Set<String> skip = new HashSet<>();
        int budget = 4 * planner.get().size() + 16;
        while (budget-- > 0) {
            Step step = planner.get().stream().filter(s -> !skip.contains(s.target())).findFirst().orElse(null);
            if (step == null) break;
            String what = describe(step);
            try {
                boolean done = switch (step) {
                    case Unmount u -> unmount(u.mountPoint());
                    case Detach d -> d.loop().detach();
                };
                if (done) {
                    removed.add(what);
                    log.accept("removed " + what);
                } else {
                    skip.add(step.target());
                    failed.add(what + ": still in use");
                }
            } catch (RuntimeException e) {
                skip.add(step.target());
                failed.add(what + ": " + e.getMessage());
            }
        }
        return new Report(List.copyOf(removed), List.copyOf(failed));
    }

    private static boolean unmount(Path mountPoint) {
        try {
            Mounts.unmount(mountPoint);
        } catch (OsException e) {
            if (!e.is(Errno.EINVAL) && !e.is(Errno.ENOENT)) throw e;   // gone meanwhile (a propagated unmount)
        }
        return true;
    }

    static String describe(Step step) {
        return switch (step) {
            case Unmount u -> "mount " + u.mountPoint() + " (" + u.source() + ")";
            case Detach d -> "loop device " + d.loop().node() + " (" + d.loop().backingFile() + ")";
        };
    }

    private static final int LOOP_MAJOR = 7;
    /** Where a bind of a device node comes from: /dev (devtmpfs), or a container's static /dev (tmpfs). */
    private static final Set<String> DEVICE_FILESYSTEMS = Set.of("devtmpfs", "tmpfs");
}
