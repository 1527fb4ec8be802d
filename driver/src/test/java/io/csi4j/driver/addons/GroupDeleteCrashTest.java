package io.csi4j.driver.addons;

import static io.csi4j.driver.addons.VolumeGroupEndToEndTest.code;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.DriverConfig.GroupDeletePolicy;
import io.csi4j.driver.addons.Plugin.Setup;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.group.VolumeGroups.Step;
import io.csi4j.driver.model.State;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.proto.addons.volumegroup.ControllerGetVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.grpc.Status.Code;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DeleteVolumeGroup (policy delete-volumes) is atomic from the caller's view even across a crash: a child JVM
 * is SIGKILLed after the intent commit, or after one or two of the three members are gone; the restarted plugin's
 * reconciler must finish the delete — no member row, no member artifact, no group left, the volume outside the
 * group untouched — and the group then answers as deleted.
 */
class GroupDeleteCrashTest {
    @TempDir Path dir;

    static Stream<Arguments> crashes() {
        List<Arguments> all = new ArrayList<>();
        for (Setup setup : Setup.values()) {
            all.add(Arguments.of(setup, Step.DELETE_INTENT_COMMITTED, 1));
            all.add(Arguments.of(setup, Step.MEMBER_DELETED, 1));
            all.add(Arguments.of(setup, Step.MEMBER_DELETED, 2));
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0}, killed at {1} #{2}")
    @MethodSource("crashes")
    @Timeout(180)
    void theReconcilerFinishesADeleteCutShort(Setup setup, Step step, int occurrence) throws Exception {
        setup.requireMachine();
        Path data = dir.resolve("data");
        Files.createDirectories(data);
        List<String> ids = runAndKill(data, setup, step, occurrence);
        String group = ids.get(0);
        String bystander = ids.get(1);
        List<String> members = ids.subList(2, 5);
        int gone = step == Step.DELETE_INTENT_COMMITTED ? 0 : occurrence;

        try {
            // what the kill left: the intent, with `gone` members already finished
            try (Catalog catalog = Catalog.openIn(data)) {
                assertEquals(State.DELETING, catalog.volumeGroups().byId(group).orElseThrow().state());
                int finished = 0;
                for (String m : members) {
                    var row = catalog.volumes().byId(m);
                    if (row.isEmpty()) {
                        finished++;
                        assertFalse(artifactExists(data, m), m + " has no row but still an artifact");
                    } else {
                        assertEquals(State.DELETING, row.get().state(), m);
                        assertTrue(artifactExists(data, m), m + " is DELETING and its artifact should still be there");
                    }
                }
                assertEquals(gone, finished);
                assertEquals(State.READY, catalog.volumes().byId(bystander).orElseThrow().state());
            }

            try (Plugin plugin = Plugin.start(Plugin.config(data, "node-a", setup, GroupDeletePolicy.DELETE_VOLUMES, 8))) {
                var report = plugin.driver().reconcileReport();
                assertTrue(report.finished().contains(group), report.summary());
                assertEquals(members.size() - gone + 1, report.finished().size(), report.finished().toString());
                assertTrue(report.clean(), "orphans: " + report.orphanVolumes());
                var catalog = plugin.driver().catalog();
                assertEquals(0, catalog.volumeGroups().count());
                assertEquals(1, catalog.volumes().count());
                assertEquals(List.of(), catalog.integrityCheck());
                for (String m : members) {
                    assertFalse(plugin.driver().engine().volumeArtifacts().contains(m), m);
                    code(Code.NOT_FOUND, () -> plugin.getVolume(m));
                }
                assertTrue(plugin.driver().engine().volumeArtifacts().contains(bystander));
                assertEquals(bystander, plugin.getVolume(bystander).getVolumeId());
                code(Code.NOT_FOUND, () -> plugin.groups().controllerGetVolumeGroup(
                        ControllerGetVolumeGroupRequest.newBuilder().setVolumeGroupId(group).build()));
                plugin.groups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(group).build());
            }
        } finally {
            // the child mounted the XFS pool and died with it mounted
            Pool.uninstall(new DataDir(data));
        }
    }

    /** Whether the pool still holds an artifact named after the volume (image file or directory). */
    private static boolean artifactExists(Path data, String volumeId) throws java.io.IOException {
        try (var files = Files.walk(data.resolve("pool"))) {
            return files.anyMatch(p -> p.getFileName().toString().startsWith(volumeId));
        }
    }

    /** Runs the child until it reports the step, SIGKILLs it, returns the ids it printed. */
    private List<String> runAndKill(Path data, Setup setup, Step step, int occurrence) throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Path stderr = dir.resolve("child-stderr.txt");
        Process child = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), GroupDeleteCrashChild.class.getName(),
                data.toString(), setup.name(), step.name(), Integer.toString(occurrence))
                .redirectError(stderr.toFile())
                .start();
        try {
            var reader = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<List<String>> lines = CompletableFuture.supplyAsync(() -> {
                List<String> seen = new ArrayList<>();
                try {
                    for (String line; (line = reader.readLine()) != null; ) {
                        seen.add(line);
                        if (line.startsWith("STOPPED") || line.equals("DONE")) break;
                    }
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                return seen;
            });
            List<String> out = lines.get(120, TimeUnit.SECONDS);
            assertTrue(!out.isEmpty() && out.getLast().startsWith("STOPPED " + step), "child did not stop at " + step
                    + ": " + out + "\n" + Files.readString(stderr));
            assertTrue(out.getFirst().startsWith("IDS "), out.toString());
            return List.of(out.getFirst().substring(4).split(" "));
        } finally {
            child.destroyForcibly();                            // SIGKILL
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            assertEquals(137, child.exitValue(), "child was not killed by SIGKILL");
        }
    }
}
