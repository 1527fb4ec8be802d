package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterMobilityTest.digest;
import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.DeleteVolumeRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The crash window of the old primary's side of a handoff, by hand (docs/design.md, crash protocol): its cut for the
 * successor keeps the final point as its replica (durable, the others dropped) before its state names that point. A
 * crash between the two leaves a demoted copy whose one replica is not its state's point; the agent's start-up
 * ({@code Rounds.finishCutShort}) makes that replica the image again (the same content: nothing writes to a demoted
 * copy) and records it, and the copy's first round from the new primary is still a delta against it.
 */
class HandoffBaseCutShortTest {
    static FailoverPair fx;
    @RegisterExtension
    static final ClassCluster CLUSTER = new ClassCluster(dir -> fx = new FailoverPair(dir, 8));

    @Test
    void aCrashBeforeTheOldPrimaryRecordedTheHandedOverPointIsFinishedAtStartUp() throws Exception {
        var volume = fx.createReplicated("base-cut");
        String id = volume.id(), a = volume.primary(), b = volume.secondary();
        try (var mounted = fx.mounted(id, a)) {
            fx.controllerPublish(a, id);
            writeRecords(mounted.on(a).resolve("records"), 0, 1000);
            fx.round(b, a, id);
            mounted.gone(a);
            fx.controllerPublish(b, id);                                   // the handoff: A cut P for B and kept it
            String handed = fx.replica(b, id).getPoint();
            assertEquals(handed, fx.replica(a, id).getPoint());

            // the crash, by hand: A's agent killed with its state as before it named P (it held no point as the first primary)
            var agentA = fx.cluster.agent(a);
            agentA.child.kill();
            Path state = fx.tmp.resolve(a).resolve("replication").resolve(id + ".json");
            String text = Files.readString(state);
            assertTrue(text.contains("\"" + handed + "\""), text);
            Files.writeString(state, text.replace("\"" + handed + "\"", "\"\""));
            agentA.start();
            fx.cluster.awaitEveryNode();
            assertEquals(handed, fx.replica(a, id).getPoint(), "the handed-over point recorded at start-up\n" + agentA.child.stderr());
            Path replica = fx.tmp.resolve(a).resolve("pool/replicas").resolve(id + "@" + handed + ".img");
            Path image = fx.tmp.resolve(a).resolve("pool/volumes").resolve(id + ".img");
            assertArrayEquals(digest(replica), digest(image), "the image is the point its state names");

            writeRecords(mounted.on(b).resolve("records"), 1000, 1500);
            mounted.off(b);
            var back = fx.round(a, b, id);
            assertEquals(handed, back.getBasePoint(), "a delta against the handed-over point: " + back);

            fx.controllerUnpublish(b, id);
            fx.controllerPublish(a, id);
            assertRecords(mounted.on(a).resolve("records"), 1500);
            mounted.gone(a);
            fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            for (String n : List.of(a, b)) {
                assertFalse(fx.replica(n, id).getPresent());
                assertEquals(List.of(), ClusterHandoffBaseTest.mentioning(fx.tmp, n, id), "nothing of the volume left on " + n);
            }
        }
    }
}
