package io.csi4j.driver.testing;

import static org.junit.jupiter.api.Assertions.fail;

import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.UnmountFlag;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test that leaves a mount or a loop device behind. Other test runs may share this
 * machine's kernel, so only what lies under the roots a test registered with {@link #watch} counts
 * (mount points there, loop devices backed by files there), plus, per test class, loop devices and
 * mounts that appeared during the class and reference one of those roots. Leaks are cleaned up
 * after being reported, so one failing test does not fail the next.
 */
public final class LeakCheck implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {
    private static final Set<Path> ROOTS = ConcurrentHashMap.newKeySet();
    private static final Set<Path> CLASS_ROOTS = ConcurrentHashMap.newKeySet();
    private static final Set<Path> TEMPORARY = ConcurrentHashMap.newKeySet();
    private Set<Integer> loopsBefore = Set.of();
    private Set<Integer> mountsBefore = Set.of();

    /** Registers a directory whose mounts and loop devices must all be gone at the end of the test. */
    public static Path watch(Path root) {
        Path real = root.toAbsolutePath().normalize();
        ROOTS.add(real);
        CLASS_ROOTS.add(real);
        return root;
    }

    /**
     * A new directory under the system's temporary directory, watched as {@link #watch} watches, and deleted with all
     * it holds after its test class once nothing is mounted under it (a test's node directory: staging paths, a catalog).
     */
    public static Path temporaryDirectory(String prefix) {
        try {
            Path dir = Files.createTempDirectory(prefix);
            TEMPORARY.add(dir.toAbsolutePath().normalize());
            return watch(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        loopsBefore = LoopDevice.list().stream().map(LoopDevice::number).collect(Collectors.toSet());
        mountsBefore = MountTable.read().mounts().stream().map(MountInfo::id).collect(Collectors.toSet());
        CLASS_ROOTS.clear();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        List<String> leaks = leaksUnder(Set.copyOf(ROOTS));
        ROOTS.clear();
        if (!leaks.isEmpty()) fail("test left behind: " + leaks);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        List<String> leaks = new ArrayList<>();
        for (LoopDevice d : LoopDevice.list()) {
            if (!loopsBefore.contains(d.number()) && under(d.backingFile(), CLASS_ROOTS)) leaks.add("loop " + d);
        }
        for (MountInfo m : MountTable.read().mounts()) {
            if (!mountsBefore.contains(m.id()) && (under(m.mountPoint(), CLASS_ROOTS) || under(Path.of(m.source()), CLASS_ROOTS))) {
                leaks.add("mount " + m.mountPoint());
            }
        }
        leaks.addAll(leaksUnder(Set.copyOf(CLASS_ROOTS)));
        CLASS_ROOTS.clear();
        deleteTemporary();
        if (!leaks.isEmpty()) fail("test class left behind: " + leaks);
    }

    private static void deleteTemporary() {
        for (Path dir : Set.copyOf(TEMPORARY)) {
            TEMPORARY.remove(dir);
            if (!MountTable.read().under(dir).isEmpty() || !Files.exists(dir)) continue;   // still mounted: left to be seen
            try (var paths = Files.walk(dir)) {
                for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            } catch (IOException e) {
                throw new UncheckedIOException("could not delete the test's directory " + dir, e);
            }
        }
    }

    /** Reports, then removes, mounts under the roots and loop devices backed by files under them. */
    public static List<String> leaksUnder(Set<Path> roots) {
        List<String> leaks = new ArrayList<>();
        for (Path root : roots) {
            for (MountInfo m : MountTable.read().under(root)) leaks.add("mount " + m.mountPoint() + " (" + m.source() + ")");
        }
        for (LoopDevice d : LoopDevice.list()) {
            if (under(d.backingFile(), roots)) leaks.add("loop " + d.node() + " -> " + d.backingFile());
        }
        if (!leaks.isEmpty()) release(roots);
        return leaks;
    }

    /**
     * Unmounts everything under the roots (deepest first) and detaches loop devices backed there.
     * Rounds, because a filesystem holding a loop device's backing file cannot be unmounted before
     * that device is gone, and the device is only gone after its own mount is.
     */
    public static void release(Set<Path> roots) {
        for (int round = 0; round < 10; round++) {
            for (Path root : roots) {
                for (MountInfo m : MountTable.read().under(root)) {
                    try {
                        Mounts.unmount(m.mountPoint());
                    } catch (RuntimeException busy) {
                        // the next round, once the devices above it are gone
                    }
                }
            }
            for (LoopDevice d : LoopDevice.list()) {
                if (under(d.backingFile(), roots)) {
                    try {
                        d.detach();
                    } catch (RuntimeException ignored) {
                        // gone meanwhile
                    }
                }
            }
            boolean clean = roots.stream().allMatch(r -> MountTable.read().under(r).isEmpty())
                    && LoopDevice.list().stream().noneMatch(d -> under(d.backingFile(), roots));
            if (clean) return;
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        for (Path root : roots) {
            for (MountInfo m : MountTable.read().under(root)) Mounts.unmount(m.mountPoint(), UnmountFlag.DETACH);
        }
    }

    private static boolean under(Path path, Set<Path> roots) {
        return roots.stream().anyMatch(path::startsWith);
    }
}
