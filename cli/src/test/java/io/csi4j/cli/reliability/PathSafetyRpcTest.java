package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.proto.csi.*;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8, path safety over the wire: hostile ids, names and staging/target paths (.., relative, NUL, very
 * long components, symlinks planted by another user) never lead to a mount, a file or a delete outside the
 * data directory and the paths the CO gave. A canary tree (files, a directory, someone else's mount) must
 * be exactly as it was, and every mount the plugin made must be under the CO's directory.
 */
class PathSafetyRpcTest {
    static final int NOBODY = 65534;
    private final List<String> outcomes = new ArrayList<>();

    @Test
    void hostileIdsNamesAndPathsReachNothingOutside(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path co = Files.createDirectories(tmp.resolve("co"));
        Path canary = Files.createDirectories(tmp.resolve("canary"));
        for (String d : List.of("dir1", "dir2", "dir3", "mnt")) Files.createDirectories(canary.resolve(d));
        Files.writeString(canary.resolve("precious.txt"), "do not touch");
        Files.writeString(canary.resolve("dir1/inside.txt"), "nor this");
        sh("mount", "-t", "tmpfs", "-o", "size=1m", "someone-elses", canary.resolve("mnt").toString());
        Map<String, String> canaryBefore = tree(canary);
        try (Plugin plugin = Plugin.start(data, "--engine", "image", "--pool-size", "1Gi", "--overcommit-ratio", "20")) {
            var rpc = new Rpc(plugin.channel(), null);
            var cap = Rpc.mountXfs();
            String hostileName = "../../../etc/passwd\n\"quoted\" \\ \u0000-nul? " + "x".repeat(60);
            String v = rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName(hostileName.replace("\u0000", ""))
                    .setCapacityRange(Rpc.atLeast(World.VOLUME_BYTES)).addVolumeCapabilities(cap).build()).getVolume().getVolumeId();
            rpc.controller().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(v).setNodeId(World.NODE)
                    .setVolumeCapability(cap).build());
            expect("CreateVolume with a NUL in the name", () -> rpc.controller().createVolume(CreateVolumeRequest.newBuilder()
                    .setName(hostileName).addVolumeCapabilities(cap).build()));

            // symlinks planted by another user, in the last component and in a parent
            Path t1 = plant(co.resolve("t1"), canary.resolve("dir1"));
            Path evil = plant(co.resolve("evil"), canary);
            Path s1 = plant(co.resolve("s1"), canary.resolve("dir2"));
            Path t3 = plant(co.resolve("t3"), canary.resolve("mnt"));
            Path staging = Files.createDirectories(co.resolve("staging"));
            expect("NodeStageVolume at a symlink", () -> stage(rpc, v, s1));
            expect("NodeStageVolume under a symlinked parent", () -> stage(rpc, v, evil.resolve("s2")));
            stage(rpc, v, staging);
            expect("NodePublishVolume at a symlink", () -> publish(rpc, v, staging, t1));
            expect("NodePublishVolume under a symlinked parent", () -> publish(rpc, v, staging, evil.resolve("t2")));
            expect("NodeUnpublishVolume at a symlink to someone else's mount", () -> rpc.node().nodeUnpublishVolume(
                    NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v).setTargetPath(t3.toString()).build()));
            expect("NodeUnpublishVolume at someone else's mount", () -> rpc.node().nodeUnpublishVolume(
                    NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v).setTargetPath(canary.resolve("mnt").toString()).build()));
            expect("NodeUnstageVolume at someone else's mount", () -> rpc.node().nodeUnstageVolume(
                    NodeUnstageVolumeRequest.newBuilder().setVolumeId(v).setStagingTargetPath(canary.resolve("mnt").toString()).build()));
            expect("NodeUnstageVolume at a symlink", () -> rpc.node().nodeUnstageVolume(
                    NodeUnstageVolumeRequest.newBuilder().setVolumeId(v).setStagingTargetPath(s1.toString()).build()));
            // paths that are not what they seem
            for (String bad : List.of(co + "/../canary/dir3", "relative/target", co + "/a\u0000b", co + "/" + "y".repeat(300),
                    co + "/z".repeat(2100), co + "/./t", "/")) {
                expect("NodePublishVolume at '" + bad.replace("\u0000", "\\0").substring(0, Math.min(bad.length(), 60)) + "'",
                        () -> rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(v)
                                .setStagingTargetPath(staging.toString()).setTargetPath(bad).setVolumeCapability(cap).build()));
                expect("NodeUnpublishVolume at that path", () -> rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder()
                        .setVolumeId(v).setTargetPath(bad).build()));
            }
            // hostile ids with good paths
            Path other = Files.createDirectories(co.resolve("other"));
            for (String id : List.of("..", "../../etc", "/etc", "vol-../../x", "a\u0000b", "x".repeat(300), canary.toString())) {
                expect("NodeStageVolume id " + id.replace("\u0000", "\\0").substring(0, Math.min(id.length(), 40)),
                        () -> stage(rpc, id, other));
                expect("NodePublishVolume id", () -> publish(rpc, id, staging, co.resolve("t-other")));
                expect("NodeUnpublishVolume id", () -> rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder()
                        .setVolumeId(id).setTargetPath(co.resolve("t-other").toString()).build()));
                expect("DeleteVolume id", () -> rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build()));
                expect("CreateSnapshot of id", () -> rpc.controller().createSnapshot(CreateSnapshotRequest.newBuilder()
                        .setName("s-" + id.hashCode()).setSourceVolumeId(id).build()));
                expect("DeleteSnapshot id", () -> rpc.controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(id).build()));
                expect("ControllerExpandVolume id", () -> rpc.controller().controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder()
                        .setVolumeId(id).setCapacityRange(Rpc.atLeast(1L << 30)).build()));
            }
            outcomes.forEach(o -> System.out.println("path safety: " + o));

            // the good publish still works, and every mount of the plugin is under the CO's directory or the data dir
            publish(rpc, v, staging, co.resolve("good-target"));
            List<Path> mounts = Leaks.mountsUnder(tmp, data.resolve("pool"));
            mounts.remove(canary.resolve("mnt"));
            assertEquals(Stream.of(staging, co.resolve("good-target")).sorted().toList(), mounts.stream().sorted().toList(),
                    "mounts the plugin made");
            assertEquals(canaryBefore, tree(canary), "the canary tree changed");
            assertTrue(io.csi4j.driver.os.MountTable.read().isMountPoint(canary.resolve("mnt")), "someone else's mount is still there");
            for (Path link : List.of(t1, evil, s1, t3)) assertTrue(Files.isSymbolicLink(link), "the planted link is left alone: " + link);

            // the hostile name survives a rebuild of the catalog from the sidecars, still idempotent
            rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(v).setTargetPath(co.resolve("good-target").toString()).build());
            rpc.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(v).setStagingTargetPath(staging.toString()).build());
            assertEquals(0, plugin.stop(30_000));
            var fsck = Plugin.run("fsck", "--data-dir", data.toString(), "--node-id", "node-1", "--rebuild", "--force");
            assertEquals(0, fsck.exit(), fsck.stdout() + fsck.stderr());
            try (Plugin again = Plugin.start(data, "--engine", "image", "--pool-size", "1Gi", "--overcommit-ratio", "20")) {
                var rpc2 = new Rpc(again.channel(), null);
                assertEquals(v, rpc2.controller().createVolume(CreateVolumeRequest.newBuilder().setName(hostileName.replace("\u0000", ""))
                        .setCapacityRange(Rpc.atLeast(World.VOLUME_BYTES)).addVolumeCapabilities(cap).build()).getVolume().getVolumeId());
                rpc2.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v).build());
                assertEquals(0, again.stop(30_000));
            }
        } finally {
            Leaks.cleanUp(tmp);   // also someone else's tmpfs
        }
    }

    private void expect(String what, Supplier<?> call) {
        try {
            call.get();
            outcomes.add(what + ": OK");
        } catch (StatusRuntimeException e) {
            Status.Code code = e.getStatus().getCode();
            outcomes.add(what + ": " + code);
            assertNotEquals(Status.Code.INTERNAL, code, what + ": " + e.getStatus());
            assertNotEquals(Status.Code.UNKNOWN, code, what + ": " + e.getStatus());
        }
    }

    private static Object stage(Rpc rpc, String id, Path staging) {
        return rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setVolumeCapability(Rpc.mountXfs()).build());
    }

    private static Object publish(Rpc rpc, String id, Path staging, Path target) {
        return rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(Rpc.mountXfs()).build());
    }

    /** A symlink at {@code link} to {@code to}, owned by another user (nobody). */
    private static Path plant(Path link, Path to) throws IOException {
        Files.createSymbolicLink(link, to);
        Files.setAttribute(link, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
        return link;
    }

    /** Every entry under {@code dir} (not following links) with its content or kind. */
    private static Map<String, String> tree(Path dir) throws IOException {
        Map<String, String> entries = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.toList()) {
                String kind = Files.isSymbolicLink(p) ? "link" : Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? "dir"
                        : Files.readString(p);
                entries.put(dir.relativize(p).toString(), kind);
            }
        }
        return entries;
    }

    private static void sh(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) throw new IOException(String.join(" ", command) + ": " + out);
    }
}
