package io.csi4j.cli.cluster;

import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.Mounts;
import io.csi4j.driver.os.UnmountFlag;
import io.csi4j.driver.testing.Privileged;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One test class's cluster of real processes, as a JUnit 5 extension on a static field (the set-up the replicated-volume
 * process tests had each written out):
 * <pre>{@code
 * static FailoverPair fx;
 * @RegisterExtension
 * static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, 8));
 * }</pre>
 * <b>Starts</b>, before all tests: root required ({@link Privileged}: skipped without it, failed with CI=true); a new
 * directory {@code junit-cluster-*} under java.io.tmpdir; and in it whatever {@code start} starts ({@link FailoverPair}:
 * a controller and two or three image-engine agents with their PKI, each with --copy-bandwidth 64M; {@link ReplicaFixture}:
 * a controller and three agents with the flags the test gives).
 * <p><b>Stops</b>, after all tests, in this order: the fixture is closed ({@link ProcessCluster#close}: each process
 * SIGCONTed if stopped, SIGTERMed by its pid and SIGKILLed after 30 s; a killed agent's pool unmounted); whatever is
 * still mounted under the directory is unmounted, deepest first, and each loop device backed by a file there detached;
 * then the directory is deleted. A mount left after the close fails the class (a test or the driver leaked it), as the
 * undeletable {@code @TempDir} failed it before; it is removed all the same, so the next class starts clean.
 */
final class ClassCluster implements BeforeAllCallback, AfterAllCallback {
    /** Starts the fixture in {@code dir}; the test usually keeps it in a static field as well. */
    interface Start {
        AutoCloseable start(Path dir) throws Exception;
    }

    private final Start start;
    private Path dir;
    private AutoCloseable fixture;

    ClassCluster(Start start) {
        this.start = start;
    }

    /** The class's directory (the nodes' data directories, the PKI, the staging and target paths are under it). */
    Path dir() {
        return dir;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        Privileged.requireRoot();
        dir = Files.createTempDirectory("junit-cluster-").toRealPath();  // as mountinfo and the loop devices name it
        fixture = start.start(dir);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (dir == null) return;
        Throwable failure = null;
        try {
            if (fixture != null) fixture.close();
        } catch (Exception | Error e) {
            failure = e;
        }
        List<String> left = release(dir);
        if (!left.isEmpty()) {
            var leak = new AssertionError("left after the cluster stopped: " + left);
            if (failure == null) failure = leak;
            else failure.addSuppressed(leak);
        }
        try {
            delete(dir);
        } catch (IOException e) {
            if (failure == null) failure = e;
            else failure.addSuppressed(e);
        }
        if (failure instanceof Exception e) throw e;
        if (failure instanceof Error e) throw e;
    }

    /**
     * Unmounts what is mounted under {@code dir} and detaches the loop devices backed there; returns the mounts it found
     * (a loop device alone is only told on stderr: an unmounted image's device may still be on its way out). Rounds,
     * because a mount on a loop device backed under the directory goes before that device can.
     */
    static List<String> release(Path dir) {
        List<String> mounts = MountTable.read().under(dir).stream().map(m -> m.mountPoint() + " (" + m.source() + ")").toList();
        for (int round = 0; round < 10; round++) {
            for (MountInfo m : MountTable.read().under(dir)) {
                try {
                    Mounts.unmount(m.mountPoint());
                } catch (RuntimeException busy) {
                    // the next round, once what is above it is gone
                }
            }
            List<LoopDevice> loops = LoopDevice.list().stream().filter(d -> d.backingFile().startsWith(dir)).toList();
            for (LoopDevice d : loops) {
                System.err.println("detaching " + d.node() + " -> " + d.backingFile());
                d.detach();
            }
            if (MountTable.read().under(dir).isEmpty() && loops.isEmpty()) return mounts;
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (MountInfo m : MountTable.read().under(dir)) Mounts.unmount(m.mountPoint(), UnmountFlag.DETACH);
        return mounts;
    }

    /** Deletes {@code dir} and all in it, deepest first; the first file that cannot be deleted fails it. */
    static void delete(Path dir) throws IOException {
        List<Path> all = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(all::add);
        }
        for (Path p : all) Files.deleteIfExists(p);
    }
}
