package io.csi4j.cli.demo;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.testing.Cli;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The demo end to end: root, loop devices, an XFS pool image, mounts; it must leave nothing behind. */
class DemoCommandTest {
    @TempDir
    Path work;

    @Test
    void walksTheLifecycleChecksEveryStepAndLeavesNothing() throws Exception {
        Privileged.requireRoot();
        var r = Cli.exec("demo", "--work-dir", work.toString());
        assertEquals(0, r.exit(), r::toString);
        assertTrue(r.out().contains("demo passed: every step checked its result"), r.out());
        List<String> steps = r.out().lines().filter(l -> l.matches(" *\\d+\\. .*")).toList();
        assertEquals(12, steps.size(), r.out());
        for (String step : steps) assertTrue(step.matches(" *\\d+\\. .{38} ok .*"), "step did not pass: " + step);
        assertTrue(r.out().contains("with alpha and beta (CSI-Addons)"), "no volume group step");
        assertTrue(r.out().contains("\"hello from csi4j\""), "the restored file is not shown");
        assertTrue(r.out().contains("\"hello from csi4j / changed after the snapshot\""), "the clone's file is not shown");
        try (Stream<Path> left = Files.list(work)) {
            assertEquals(List.of(), left.toList(), "the demo left files behind");
        }
        assertTrue(MountTable.read().under(work).isEmpty(), "the demo left mounts behind");
        assertTrue(LoopDevice.list().stream().noneMatch(d -> String.valueOf(d.backingFile()).startsWith(work.toString())),
                "the demo left a loop device behind");
    }

    @Test
    void refusesWithoutAUsablePoolSize() throws Exception {
        Privileged.requireRoot();
        var r = Cli.exec("demo", "--work-dir", work.toString(), "--pool-size", "1Mi");
        assertEquals(1, r.exit(), r::toString);
        assertTrue(r.out().contains("start the plugin") && r.out().contains("FAIL"), r.out());
        assertTrue(r.out().contains("pool size 1048576 is below"), r.out());
        try (Stream<Path> left = Files.list(work)) {
            assertEquals(List.of(), left.toList(), "a failed start left files behind");
        }
    }
}
