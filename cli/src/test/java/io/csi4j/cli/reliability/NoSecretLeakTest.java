package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.proto.addons.volumegroup.ControllerGetVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsRequest;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.csi.*;
import io.grpc.StatusRuntimeException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8, secrets: every RPC that takes secrets gets them, on success and on failure paths, with the
 * plugin logging at debug and serving metrics. Afterwards no secret value is in its log, in any status
 * message, in the metrics, in the catalog (file, WAL, shared memory) or in any other file it wrote.
 */
class NoSecretLeakTest {
    private final String secret = "s3cret-" + UUID.randomUUID();
    private final String token = "t0ken-" + UUID.randomUUID();
    private final Map<String, String> secrets = Map.of("password", secret, "token", token);
    private final List<String> messages = new ArrayList<>();
    private int calls;

    @Test
    void noSecretValueReachesLogsErrorsMetricsOrTheCatalog(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path node = Files.createDirectories(tmp.resolve("kubelet"));
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        try (Plugin plugin = Plugin.start(data, "--engine", "image", "--pool-size", "1Gi", "--overcommit-ratio", "20",
                "--log-level", "debug", "--metrics-address", "127.0.0.1:" + port)) {
            var rpc = new Rpc(plugin.channel(), plugin.addonsChannel());
            assertTrue(rpc.hasVolumeGroups(), "the plugin serves CSI-Addons");
            lifecycle(rpc, node);
            // every method once more, from its descriptor, with the secrets in every secrets map (mostly failure paths)
            var seeds = new Seeds("vol-unknown0000000-node-1", "snap-unknown000000-node-1", node, new Random(7), secrets, false);
            for (var method : Seeds.methods(true)) {
                var status = Seeds.call(Seeds.isAddons(method) ? plugin.addonsChannel() : plugin.channel(), method,
                        seeds.seedFor(method).toByteArray());
                calls++;
                if (status.getDescription() != null) messages.add(status.getDescription());
            }
            String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertTrue(metrics.contains("CreateVolume"), "metrics are served: " + metrics.lines().limit(5).toList());
            List<Path> filesWhileRunning = scan(data);
            assertEquals(0, plugin.stop(30_000));
            String log = plugin.stderr();
            assertTrue(log.contains("CreateVolume") && log.lines().count() > calls, "the debug log has every call: " + log.lines().count() + " lines");
            System.out.printf("secrets: %d calls with secrets, %d status messages, %d log lines, %d metrics lines, %d files scanned%n",
                    calls, messages.size(), log.lines().count(), metrics.lines().count(), filesWhileRunning.size());
            for (String value : List.of(secret, token)) {
                assertFalse(log.contains(value), "a secret in the log:\n" + log.lines().filter(l -> l.contains(value)).toList());
                assertFalse(metrics.contains(value), "a secret in the metrics");
                messages.forEach(m -> assertFalse(m.contains(value), "a secret in a status message: " + m));
            }
            List<Path> files = scan(data);
            assertTrue(files.stream().anyMatch(f -> f.getFileName().toString().equals("catalog.db")));
        } finally {
            Leaks.cleanUp(tmp);
        }
    }

    /** Files the plugin wrote (all but the volume images, which hold only what workloads wrote) hold no secret. */
    private List<Path> scan(Path data) throws Exception {
        List<Path> scanned = new ArrayList<>();
        try (Stream<Path> files = Files.walk(data)) {
            for (Path f : files.filter(Files::isRegularFile).filter(f -> !f.toString().endsWith(".img")).toList()) {
                byte[] bytes = Files.readAllBytes(f);
                String text = new String(bytes, StandardCharsets.ISO_8859_1);
                for (String value : List.of(secret, token)) {
                    assertFalse(text.contains(value), "a secret in " + f);
                    assertFalse(new String(bytes, StandardCharsets.UTF_16LE).contains(value), "a secret (UTF-16) in " + f);
                }
                scanned.add(f);
            }
        }
        return scanned;
    }

    private <T> T expectOk(Supplier<T> call) {
        calls++;
        return call.get();
    }

    private void expectError(Supplier<?> call) {
        calls++;
        try {
            call.get();
            fail("expected an error");
        } catch (StatusRuntimeException e) {
            if (e.getStatus().getDescription() != null) messages.add(e.getStatus().getDescription());
        }
    }

    private void lifecycle(Rpc rpc, Path node) throws Exception {
        var cap = Rpc.mountXfs();
        Path staging = Files.createDirectories(node.resolve("a/staging"));
        Path target = node.resolve("a/target");
        String a = expectOk(() -> rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName("sec-a")
                .setCapacityRange(Rpc.atLeast(World.VOLUME_BYTES)).addVolumeCapabilities(cap).putAllSecrets(secrets).build())).getVolume().getVolumeId();
        String b = expectOk(() -> rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName("sec-b")
                .setCapacityRange(Rpc.atLeast(World.VOLUME_BYTES)).addVolumeCapabilities(cap).putAllSecrets(secrets).build())).getVolume().getVolumeId();
        expectError(() -> rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName("sec-a")
                .setCapacityRange(Rpc.atLeast(2 * World.VOLUME_BYTES)).addVolumeCapabilities(cap).putAllSecrets(secrets).build()));
        expectError(() -> rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName("sec-bad")
                .putParameters("nope", "x").addVolumeCapabilities(cap).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.controller().validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(a)
                .addVolumeCapabilities(cap).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.controller().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(a)
                .setNodeId(World.NODE).setVolumeCapability(cap).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(a)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(cap).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(a)
                .setStagingTargetPath(staging.toString()).setTargetPath(target.toString()).setVolumeCapability(cap)
                .putAllSecrets(secrets).build()));
        expectError(() -> rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(a).putAllSecrets(secrets).build()));
        long bigger = World.VOLUME_BYTES + (64L << 20);
        expectOk(() -> rpc.controller().controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(a)
                .setCapacityRange(Rpc.atLeast(bigger)).setVolumeCapability(cap).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.node().nodeExpandVolume(NodeExpandVolumeRequest.newBuilder().setVolumeId(a).setVolumePath(target.toString())
                .setCapacityRange(Rpc.atLeast(bigger)).setVolumeCapability(cap).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.controller().controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(a)
                .putMutableParameters("readAheadKiB", "256").putAllSecrets(secrets).build()));
        expectError(() -> rpc.controller().controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(a)
                .putMutableParameters("unknownKey", "1").putAllSecrets(secrets).build()));
        String s = expectOk(() -> rpc.controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName("sec-s")
                .setSourceVolumeId(a).putAllSecrets(secrets).build())).getSnapshot().getSnapshotId();
        expectOk(() -> rpc.controller().getSnapshot(GetSnapshotRequest.newBuilder().setSnapshotId(s).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.controller().listSnapshots(ListSnapshotsRequest.newBuilder().putAllSecrets(secrets).build()));
        var g = expectOk(() -> rpc.groups().createVolumeGroupSnapshot(CreateVolumeGroupSnapshotRequest.newBuilder().setName("sec-g")
                .addSourceVolumeIds(a).addSourceVolumeIds(b).putAllSecrets(secrets).build())).getGroupSnapshot();
        expectOk(() -> rpc.groups().getVolumeGroupSnapshot(GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(g.getGroupSnapshotId())
                .addAllSnapshotIds(g.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList()).putAllSecrets(secrets).build()));
        expectError(() -> rpc.groups().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(g.getGroupSnapshotId()).addSnapshotIds(s).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.groups().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId(g.getGroupSnapshotId()).addAllSnapshotIds(g.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList())
                .putAllSecrets(secrets).build()));
        String vg = expectOk(() -> rpc.volumeGroups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("sec-vg")
                .addVolumeIds(b).putAllSecrets(secrets).build())).getVolumeGroup().getVolumeGroupId();
        expectOk(() -> rpc.volumeGroups().controllerGetVolumeGroup(ControllerGetVolumeGroupRequest.newBuilder().setVolumeGroupId(vg)
                .putAllSecrets(secrets).build()));
        expectOk(() -> rpc.volumeGroups().listVolumeGroups(ListVolumeGroupsRequest.newBuilder().putAllSecrets(secrets).build()));
        expectError(() -> rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(b).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.volumeGroups().modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest.newBuilder()
                .setVolumeGroupId(vg).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.volumeGroups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(vg)
                .putAllSecrets(secrets).build()));
        expectOk(() -> rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(a).setTargetPath(target.toString()).build()));
        expectOk(() -> rpc.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(a).setStagingTargetPath(staging.toString()).build()));
        expectOk(() -> rpc.controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(a)
                .setNodeId(World.NODE).putAllSecrets(secrets).build()));
        expectOk(() -> rpc.controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s).putAllSecrets(secrets).build()));
        for (String id : List.of(a, b)) {
            expectOk(() -> rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).putAllSecrets(secrets).build()));
        }
    }
}
