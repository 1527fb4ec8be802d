package io.csi4j.driver.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.mobility.Bandwidth;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The start-up order replication relies on (docs/design.md, "Reconcile at start-up"; docs/replication.md, "What rounds
 * rely on"): the pool's {@code .tmp} is emptied by {@link Driver#open}, before it returns, so before
 * {@link Driver#agentServices}, which runs the replication start-up steps ({@code Rounds.enforceFences},
 * {@code finishCutShort}) on the opened driver, can be called. Whatever a start-up step needs must live outside
 * {@code .tmp}. Fails if the sweep moves out of {@code open} (later, lazily, or into serving).
 */
class StartupSweepTest {
    @TempDir
    Path dataDir;

    @Test
    void tmpIsEmptyWhenOpenReturnsBeforeTheReplicationStartUpSteps() throws Exception {
        DriverConfig config = DriverConfig.defaults(dataDir, "node-s");
        Path tmp;
        try (Driver driver = Driver.open(config)) {
            tmp = driver.engine().pool().path().resolve(".tmp");
        }
        // what a crash leaves: a round's build, a journal being written, a tree renamed in to be deleted
        Files.writeString(tmp.resolve("vol-a.import"), "a round's build cut short");
        Files.writeString(tmp.resolve("vol-a.journal"), "a journal not yet complete");
        Files.createDirectories(tmp.resolve("vol-b.deleting").resolve("inner"));
        Files.writeString(tmp.resolve("vol-b.deleting").resolve("inner").resolve("f"), "x");

        try (Driver driver = Driver.open(config)) {
            assertEquals(List.of(), entries(tmp), "open swept .tmp before returning");
            assertTrue(driver.ready());
            assertTrue(driver.agentServices(null, Bandwidth.unlimited()).size() > 1, "the agent's services, after the sweep");
            assertEquals(List.of(), entries(tmp), "the replication start-up steps left nothing in .tmp");
        }
    }

    private static List<Path> entries(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.toList();
        }
    }
}
