package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.VolumeContentSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found by the crash harness: a plugin SIGKILLed while it held a snapshot's FIFREEZE left the volume's
 * filesystem frozen (the kernel keeps the freeze): the workload's writes hung and every later snapshot
 * answered ABORTED forever. Deterministically here: the filesystem is frozen as a killed cut leaves it,
 * the plugin is killed and restarted, and the restart thaws it.
 */
class FrozenAtCrashTest {

    @Test
    void aRestartThawsWhatAKilledSnapshotLeftFrozen(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        Path data = Files.createDirectories(tmp.resolve("data"));
        World w = new World("frozen", Files.createDirectories(tmp.resolve("kubelet")), 1);
        String[] flags = {"--engine", "image", "--pool-size", "1Gi", "--overcommit-ratio", "10"};
        try {
            Plugin plugin = Plugin.start(data, flags);
            var rpc = new Rpc(plugin.channel(), null);
            w.createVolume(VolumeContentSource.getDefaultInstance(), null, World.VOLUME_BYTES).step().run(rpc);
            World.Vol v = w.volumes.values().iterator().next();
            for (var op : List.of(w.attach(v), w.stage(v), w.publish(v), w.write(v))) op.step().run(rpc);
            sh("xfs_freeze", "-f", w.staging(v).toString());         // what a cut killed between freeze and thaw leaves
            plugin.kill();

            plugin = Plugin.start(data, flags);
            try {
                var again = new Rpc(plugin.channel(), null);
                CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
                    try {
                        w.write(v).step().run(again);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                write.get(20, TimeUnit.SECONDS);                        // hangs while frozen
                assertTrue(again.controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName("after-thaw")
                        .setSourceVolumeId(v.id).build()).getSnapshot().getReadyToUse());
                for (var op : List.of(w.unpublish(v), w.unstage(v))) op.step().run(again);
                assertEquals(0, plugin.stop(30_000));
            } finally {
                plugin.close();
            }
        } finally {
            try {
                sh("xfs_freeze", "-u", w.volumes.isEmpty() ? "/nonexistent" : w.staging(w.volumes.values().iterator().next()).toString());
            } catch (Exception notFrozen) {
                // thawed by the plugin, as it should be
            }
            Leaks.cleanUp(tmp);
        }
    }

    private static void sh(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) throw new IllegalStateException(String.join(" ", command) + ": " + out);
    }
}
