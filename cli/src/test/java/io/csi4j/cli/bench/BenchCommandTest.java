package io.csi4j.cli.bench;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.cli.testing.Cli;
import io.csi4j.cli.testing.LivePlugin;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.os.MountTable;
import io.csi4j.proto.csi.ListSnapshotsResponse;
import io.csi4j.proto.csi.ListVolumesResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** bench against the real driver: small runs of every scenario, the JSON report, --compare, and the clean-up. */
class BenchCommandTest {
    @TempDir
    static Path dir;
    static LivePlugin plugin;
    static Cli cli;

    @BeforeAll
    static void start() {
        plugin = LivePlugin.start(dir.resolve("plugin"), EngineKind.DIR, false);
        cli = Cli.against(plugin.endpoint());
    }

    @AfterAll
    static void stop() {
        plugin.close();
    }

    static void assertNothingLeft(Cli cli) {
        assertEquals(0, cli.json(ListVolumesResponse.getDefaultInstance(), "controller", "list-volumes", "--paging").getEntriesCount(),
                "bench left volumes behind");
        assertEquals(0, cli.json(ListSnapshotsResponse.getDefaultInstance(), "controller", "list-snapshots", "--paging").getEntriesCount(),
                "bench left snapshots behind");
    }

    static BenchReport run(Cli cli, Path out, String... args) throws Exception {
        var all = new java.util.ArrayList<>(List.of("bench", "--out", out.toString()));
        all.addAll(List.of(args));
        var r = cli.run(all.toArray(String[]::new));
        assertEquals(0, r.exit(), r::toString);
        assertTrue(r.out().contains("iterations/s") && r.out().contains("P99"), r.out());
        return BenchReport.fromJson(Files.readString(out));
    }

    @Test
    void createDeleteWithPrefillWritesItsFiguresAndCleansUp() throws Exception {
        Path out = dir.resolve("reports/create-delete.json");
        BenchReport report = run(cli, out, "--scenario", "create-delete", "--requests", "24", "--concurrency", "4", "--prefill", "6",
                "--size", "1Mi");
        assertEquals("create-delete", report.scenario());
        assertEquals(24, report.iterations());
        assertEquals(0, report.failedIterations());
        assertEquals(6, report.prefill());
        assertEquals(4, report.concurrency());
        assertEquals(plugin.endpoint(), report.endpoint());
        assertTrue(report.plugin().startsWith("local.csi4j.io"), report.plugin());
        CallStats create = report.calls().get("CreateVolume");
        CallStats delete = report.calls().get("DeleteVolume");
        assertEquals(24, create.count()); // prefill is not measured
        assertEquals(24, delete.count());
        for (CallStats c : List.of(create, delete)) {
            assertTrue(0 < c.p50Ms() && c.p50Ms() <= c.p90Ms() && c.p90Ms() <= c.p99Ms() && c.p99Ms() <= c.maxMs(), c.toString());
        }
        long[] samples = report.samplesUs().get("CreateVolume");
        assertEquals(24, samples.length);
        assertEquals(create.maxMs(), samples[23] / 1000.0, 0.002);
        assertTrue(report.iterationsPerSecond() > 0 && report.elapsedSeconds() > 0);
        assertNothingLeft(cli);
    }

    @Test
    void everyControllerScenarioRunsAndCompares() throws Exception {
        BenchReport snapshot = run(cli, dir.resolve("snapshot.json"), "--scenario", "snapshot", "--requests", "10", "--concurrency", "2", "--size", "1Mi");
        assertEquals(10, snapshot.calls().get("CreateSnapshot").count());
        assertEquals(10, snapshot.calls().get("DeleteSnapshot").count());
        BenchReport list = run(cli, dir.resolve("list.json"), "--scenario", "list", "--requests", "5", "--prefill", "5",
                "--page-size", "2", "--size", "1Mi");
        assertEquals(15, list.calls().get("ListVolumes").count(), "5 listings of 5 volumes in pages of 2 make 15 calls");
        BenchReport probe = run(cli, dir.resolve("probe.json"), "--scenario", "probe", "--requests", "50", "--concurrency", "5");
        assertEquals(50, probe.calls().get("Probe").count());
        BenchReport mixed = run(cli, dir.resolve("mixed.json"), "--scenario", "mixed", "--requests", "8", "--size", "1Mi");
        for (String rpc : List.of("Probe", "ListVolumes", "CreateVolume", "DeleteVolume", "CreateSnapshot", "DeleteSnapshot")) {
            assertEquals(2, mixed.calls().get(rpc).count(), rpc);
        }
        BenchReport timed = run(cli, dir.resolve("timed.json"), "--scenario", "probe", "--duration", "300ms", "--concurrency", "2");
        assertTrue(timed.iterations() > 0 && timed.elapsedSeconds() >= 0.3 && timed.elapsedSeconds() < 5, timed.toString());
        assertNothingLeft(cli);

        var compare = cli.run("bench", "--compare", dir.resolve("probe.json").toString(), dir.resolve("timed.json").toString());
        assertEquals(0, compare.exit(), compare::toString);
        String expected = Comparison.ratio(probe.calls().get("Probe").p50Ms(), timed.calls().get("Probe").p50Ms());
        assertTrue(compare.out().lines().anyMatch(l -> l.startsWith("Probe p50") && l.endsWith(expected)), compare.out());
        assertTrue(compare.out().lines().anyMatch(l -> l.startsWith("iterations/s")), compare.out());

        Path notReport = Files.writeString(dir.resolve("not.json"), "{\"x\": 1}");
        var bad = cli.run("bench", "--compare", notReport.toString(), dir.resolve("probe.json").toString());
        assertEquals(1, bad.exit());
        assertTrue(bad.err().contains("not a csi4j bench report"), bad.err());
    }

    @Test
    void cloneRestoreAndGroupSnapshotScenarios() throws Exception {
        BenchReport clone = run(cli, dir.resolve("clone.json"), "--scenario", "clone", "--requests", "6", "--concurrency", "2", "--size", "1Mi");
        assertEquals(6, clone.calls().get("CreateVolume").count());
        assertEquals(6, clone.calls().get("DeleteVolume").count());
        BenchReport restore = run(cli, dir.resolve("restore.json"), "--scenario", "restore", "--requests", "6", "--size", "1Mi");
        assertEquals(6, restore.calls().get("CreateVolume").count());
        BenchReport group = run(cli, dir.resolve("group.json"), "--scenario", "group-snapshot", "--requests", "3",
                "--group-size", "3", "--size", "1Mi");
        assertEquals(3, group.calls().get("CreateVolumeGroupSnapshot").count());
        assertEquals(3, group.calls().get("DeleteVolumeGroupSnapshot").count());
        assertEquals(0, group.failedIterations());
        assertNothingLeft(cli);
    }

    @Test
    void rateStartsIterationsOnSchedule() throws Exception {
        // 20 probes at 50/s: the last starts 0.38 s after the first, however fast the plugin answers
        BenchReport paced = run(cli, dir.resolve("paced.json"), "--scenario", "probe", "--requests", "20", "--concurrency", "4",
                "--rate", "50");
        assertEquals(20, paced.calls().get("Probe").count());
        assertTrue(paced.elapsedSeconds() >= 0.38, paced.toString());
        assertTrue(paced.iterationsPerSecond() <= 55, paced.toString());
    }

    @Test
    void snapshotOfAFilledVolumeOnTheImageEngine(@TempDir Path own) throws Exception {
        Privileged.requireRoot();
        try (var image = LivePlugin.start(own, EngineKind.IMAGE, false)) {
            var c = Cli.against(image.endpoint());
            var r = c.run("bench", "--scenario", "snapshot", "--requests", "3", "--size", "64Mi", "--fill", "8Mi");
            assertEquals(0, r.exit(), r::toString);
            assertTrue(r.err().contains("filled") && r.err().contains("with 8 MiB"), r.err());
            assertNothingLeft(c);
            assertTrue(MountTable.read().under(own).isEmpty(), "mounts left: " + MountTable.read().under(own));
        }
    }

    @Test
    void failuresAreCountedByCode() throws Exception {
        // a size the dir engine's pool cannot promise: every CreateVolume fails with the plugin's code
        var r = cli.run("bench", "--scenario", "create-delete", "--requests", "4", "--concurrency", "2", "--size", "1Ei");
        assertEquals(1, r.exit(), r::toString);
        assertTrue(r.out().contains("4 failed iterations") && r.out().contains("{RESOURCE_EXHAUSTED=4}")
                && r.out().contains("first failure: RESOURCE_EXHAUSTED: not enough space"), r.out());
        assertTrue(r.out().lines().anyMatch(l -> l.matches("CreateVolume +0 +4 +- .*")), r.out());
        assertNothingLeft(cli);
        var usage = cli.run("bench", "--scenario", "everything");
        assertEquals(2, usage.exit());
        assertTrue(usage.err().contains("unknown scenario 'everything'"), usage.err());
    }

    @Test
    void stagePublishOnTheImageEngine(@TempDir Path own) throws Exception {
        Privileged.requireRoot();
        try (var image = LivePlugin.start(own, EngineKind.IMAGE, false)) {
            var c = Cli.against(image.endpoint());
            BenchReport report = run(c, own.resolve("sp.json"), "--scenario", "stage-publish", "--requests", "6", "--concurrency", "2");
            for (String rpc : List.of("NodeStageVolume", "NodePublishVolume", "NodeUnpublishVolume", "NodeUnstageVolume")) {
                assertEquals(6, report.calls().get(rpc).count(), rpc);
            }
            assertNothingLeft(c);
            assertTrue(MountTable.read().under(own).isEmpty(), "mounts left: " + MountTable.read().under(own));
        }
    }

    @Test
    void percentilesAreNearestRank() {
        long[] hundred = new long[100];
        for (int i = 0; i < 100; i++) hundred[i] = i + 1;
        assertEquals(50, Latencies.percentile(hundred, 50));
        assertEquals(90, Latencies.percentile(hundred, 90));
        assertEquals(99, Latencies.percentile(hundred, 99));
        assertEquals(100, Latencies.percentile(hundred, 100));
        assertEquals(7, Latencies.percentile(new long[] {7}, 99));
        assertEquals(0, Latencies.percentile(new long[0], 50));
        var l = new Latencies();
        for (int i = 1000; i > 0; i--) l.add(i);
        var other = new Latencies();
        other.add(5000);
        l.addAll(other);
        long[] sorted = l.sorted();
        assertEquals(1001, sorted.length);
        assertEquals(1, sorted[0]);
        assertEquals(5000, sorted[1000]);
    }
}
