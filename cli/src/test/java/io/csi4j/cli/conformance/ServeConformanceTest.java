package io.csi4j.cli.conformance;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.testkit.AccessType;
import io.csi4j.testkit.SanityConfig;
import io.csi4j.testkit.SanityReport;
import io.csi4j.testkit.SanityRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The project's own conformance suite against {@code csi4j serve} over its real socket, as a
 * separate process: the image engine (mount on an XFS reflink pool, and block) and the dir engine.
 * Mount volumes use xfs so online expansion runs: growing ext4 online needs CAP_SYS_RESOURCE,
 * which this machine's sandbox does not grant (the driver then answers FAILED_PRECONDITION).
 */
class ServeConformanceTest {
    private static final String FOCUS = System.getProperty("sanity.focus");

    @BeforeAll
    static void needsRoot() {
        Privileged.require(Privileged.isRoot(), "needs root (loop devices, mounts)");
    }

    static Stream<Arguments> plugins() {
        return Stream.of(
                Arguments.of("image engine, mount (xfs) on an XFS reflink pool", AccessType.MOUNT, "xfs",
                        new String[] {"--engine", "image", "--pool-size", "6Gi"}),
                Arguments.of("image engine, block", AccessType.BLOCK, null,
                        new String[] {"--engine", "image", "--pool-size", "6Gi"}),
                Arguments.of("dir engine, mount, on the data disk (copy snapshots)", AccessType.MOUNT, null,
                        new String[] {"--engine", "dir", "--volume-group-delete", "retain-volumes"}));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("plugins")
    void suitePassesAgainstServe(String name, AccessType access, String fsType, String[] flags, @TempDir Path tmp)
            throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        SanityReport report;
        try (ServeProcess serve = ServeProcess.start(data, flags); var pool = new PoolRelease(data)) {
            System.out.println(serve.startupLine);
            var config = SanityConfig.builder(serve.endpoint())
                    .addonsEndpoint("unix://" + data.resolve("csi-addons.sock"))
                    .stagingDir(Files.createDirectories(tmp.resolve("staging")))
                    .targetDir(Files.createDirectories(tmp.resolve("target")))
                    .volumeSize(512L << 20)
                    .accessType(access)
                    .mutableParams(flags[1].equals("image") ? Map.of("readAheadKiB", "256") : Map.of())
                    .secrets(Map.of("csi4j-test-secret", "s3cr3t-never-logged"));
            if (fsType != null) config.fsType(fsType);
            config.focus(FOCUS);   // -Dsanity.focus=REGEX runs only the tests it finds in their names
            report = new SanityRunner(config.build(), System.out).run();
            report.writeJUnitXml(Path.of("target", "sanity-" + name.replaceAll("[^a-z0-9]+", "-") + ".xml"));
            assertEquals(0, serve.stop(Duration.ofSeconds(30)), "SIGTERM stops the plugin with exit code 0");
            assertFalse(Files.exists(data.resolve("csi.sock")), "the socket is removed on shutdown");
        }
        System.out.println(name + ": " + report.summary());
        assertTrue(report.passed() > (FOCUS == null ? 100 : 0), "the suite really ran: " + report.summary());
        assertEquals(0, report.failed(), () -> "conformance failures against csi4j serve (" + name + "):\n"
                + String.join("\n", report.failures().stream().map(r -> r.name() + ": " + r.message()).toList()));
        assertNoLeftovers(data);
    }

    /** The private pool stays mounted when the plugin stops (workloads keep running); the test unmounts it. */
    private record PoolRelease(Path data) implements AutoCloseable {
        @Override
        public void close() {
            Path pool = data.resolve("pool");
            if (io.csi4j.driver.os.MountTable.read().isMountPoint(pool)) io.csi4j.driver.os.Mounts.unmount(pool);
        }
    }

    /** After a clean suite run and shutdown, nothing is left mounted or attached from the data dir. */
    private static void assertNoLeftovers(Path data) throws IOException {
        String mounts = Files.readString(Path.of("/proc/self/mountinfo"));
        long ours = mounts.lines().filter(l -> l.contains(data.toString()) && !l.contains(data.resolve("pool") + " ")).count();
        assertEquals(0, ours, "mounts left under " + data + ":\n" + mounts.lines().filter(l -> l.contains(data.toString())).toList());
    }
}
