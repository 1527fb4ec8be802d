package io.csi4j.driver.catalog;

import io.csi4j.driver.model.GroupSnapshotRecord;
import io.csi4j.driver.model.Page;
import io.csi4j.driver.model.State;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 a writer at random instants; everything it was told had committed must be there afterwards, in
 * the state it was told, and the file must pass a full integrity check. Some rounds start from no file at
 * all, so the kill can also land while the catalog is being created and migrated.
 */
class CrashSafetyTest {
    private static final int ROUNDS = 20;

    @TempDir
    Path dir;

    @Test
    @Timeout(300)
    void committedWritesSurviveSigkill() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        Path shared = dir.resolve("shared");
        Files.createDirectories(shared);
        Map<String, String> expected = new HashMap<>();  // id -> V/R/D/G: last committed fact about it
        int roundsWithCommits = 0;
        int committedTotal = 0;
        for (int round = 0; round < ROUNDS; round++) {
            boolean fresh = round % 5 == 4;
            Path data = fresh ? Files.createDirectories(dir.resolve("fresh" + round)) : shared;
            Path file = data.resolve(Catalog.FILE_NAME);
            // fresh rounds count from process start, so the kill may land in creation or migration
            long killAfterMillis = fresh ? random.nextLong(100, 1200) : random.nextLong(0, 1000);
            String context = "seed " + seed + ", round " + round + ", kill " + killAfterMillis + " ms after "
                    + (fresh ? "start" : "open");

            List<String> lines = runAndKill(file, "r" + round + "-", !fresh, killAfterMillis, context);
            Map<String, String> facts = fresh ? new HashMap<>() : expected;
            int commits = 0;
            String inDoubt = null;  // announced, not reported: the kill may have come before or after its commit
            for (String line : lines) {
                if (line.equals("OPEN")) continue;
                String[] parts = line.split(" ", 2);
                if (parts[0].equals("?")) {
                    inDoubt = parts[1];
                } else {
                    facts.put(parts[1], parts[0]);
                    inDoubt = null;
                    commits++;
                }
            }
            committedTotal += commits;
            if (commits > 0) roundsWithCommits++;
            verify(file, facts, inDoubt, context + ", " + commits + " commits reported, in doubt: " + inDoubt);
            if (inDoubt != null) facts.remove(inDoubt);  // whichever way it went, later rounds cannot know
        }
        assertTrue(roundsWithCommits >= ROUNDS / 2, "too few rounds got to commit anything: " + roundsWithCommits);
        assertTrue(committedTotal > 500, "too few commits to mean anything: " + committedTotal);
        System.out.printf("crash test: %d rounds, %d committed writes checked, seed %d%n", ROUNDS, committedTotal, seed);
    }

    /**
     * Starts the child, SIGKILLs it after the delay (counted from its OPEN line if {@code afterOpen}), and
     * returns the lines it completed (a torn last line is dropped). Every line must be read: a lost tail can
     * hold "D id" lines, and the rows they deleted would then look lost.
     */
    private List<String> runAndKill(Path file, String prefix, boolean afterOpen, long killAfterMillis, String context)
            throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Path stderr = dir.resolve("child-" + prefix + "stderr.txt");
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), CatalogCrashChild.class.getName(), file.toString(), prefix)
                .redirectError(stderr.toFile())
                .start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        CountDownLatch opened = new CountDownLatch(1);
        FutureTask<Void> pump = new FutureTask<>(() -> {
            copy(child.getInputStream(), out, opened);
            return null;
        });
        Thread.ofVirtual().start(pump);
        try {
            if (afterOpen) {
                assertTrue(opened.await(60, TimeUnit.SECONDS), "child did not open the catalog: "
                        + context + ": " + Files.readString(stderr));
            }
            assertTrue(!child.waitFor(killAfterMillis, TimeUnit.MILLISECONDS),
                    "child exited by itself (" + context + "): " + Files.readString(stderr));
        } finally {
            // SIGKILL through the handle: Process.destroyForcibly() also closes our end of the pipe, dropping
            // whatever the pump had not read yet
            child.toHandle().destroyForcibly();
            child.waitFor();
        }
        try {
            pump.get();  // to the end of the output
        } catch (ExecutionException e) {
            throw new AssertionError("reading the child's output failed: " + context, e.getCause());
        }
        assertEquals(137, child.exitValue(), "child was not killed by SIGKILL: " + context);
        String text = out.toString(StandardCharsets.UTF_8);
        String complete = text.substring(0, text.lastIndexOf('\n') + 1);
        return complete.isEmpty() ? List.of() : List.of(complete.split("\n"));
    }

    private static void verify(Path file, Map<String, String> facts, String inDoubt, String context) {
        try (Catalog catalog = Catalog.open(file)) {
            assertEquals(List.of(), catalog.integrityCheck(), context);
            for (Map.Entry<String, String> fact : facts.entrySet()) {
                String id = fact.getKey();
                if (id.equals(inDoubt)) continue;
                switch (fact.getValue()) {
                    case "V" -> assertTrue(catalog.volumes().byId(id).isPresent(), "lost volume " + id + ": " + context);
                    case "R" -> assertEquals(State.READY, catalog.volumes().byId(id).orElseThrow().state(),
                            "lost READY of " + id + ": " + context);
                    case "D" -> assertTrue(catalog.volumes().byId(id).isEmpty(), "deleted " + id + " is back: " + context);
                    case "G" -> assertTrue(catalog.groupSnapshots().byId(id).isPresent(), "lost group " + id + ": " + context);
                    default -> throw new AssertionError(fact.toString());
                }
            }
            // atomicity, reported or not: every group snapshot that exists has all three members
            long after = 0;
            Page<GroupSnapshotRecord> page;
            do {
                page = catalog.groupSnapshots().page(after, 100);
                for (GroupSnapshotRecord g : page.items()) {
                    assertEquals(3, catalog.snapshots().ofGroup(g.id()).size(), "torn group " + g.id() + ": " + context);
                }
                after = page.lastSeq();
            } while (page.more());
            assertEquals(3 * catalog.groupSnapshots().count(), catalog.snapshots().count(), context);
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream out, CountDownLatch opened) throws IOException {
        byte[] buffer = new byte[8192];
        try (in) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                synchronized (out) {
                    out.write(buffer, 0, n);
                    if (opened.getCount() > 0 && out.toString(StandardCharsets.UTF_8).startsWith("OPEN\n")) {
                        opened.countDown();
                    }
                }
            }
        }
    }

}
