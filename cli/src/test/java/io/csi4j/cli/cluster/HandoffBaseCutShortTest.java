package io.csi4j.cli.cluster;

import static io.csi4j.cli.cluster.ClusterMobilityTest.digest;
import static io.csi4j.cli.cluster.ClusterReplicationTest.assertRecords;
import static io.csi4j.cli.cluster.ClusterReplicationTest.replicated;
import static io.csi4j.cli.cluster.ClusterReplicationTest.writeRecords;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.testing.Privileged;
import io.csi4j.proto.cluster.GetReplicaRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash window of the old primary's side of a handoff, by hand (docs/design.md, crash protocol): its cut for the
 * successor keeps the final point as its replica (durable, the others dropped) before its state names that point. A
 * crash between the two leaves a demoted copy whose one replica is not its state's point; the agent's start-up
 * ({@code Rounds.finishCutShort}) makes that replica the image again (the same content: nothing writes to a demoted
 * copy) and records it, and the copy's first round from the new primary is still a delta against it.
 */
class HandoffBaseCutShortTest {
    @TempDir
    static Path tmp;
    static FailoverPair fx;

    @BeforeAll
    static void start() throws Exception {
        Privileged.requireRoot();
        fx = new FailoverPair(tmp, 8);
    }

    @AfterAll
    static void stop() throws Exception {
        if (fx != null) fx.close();
    }

    @Test
    void aCrashBeforeTheOldPrimaryRecordedTheHandedOverPointIsFinishedAtStartUp() throws Exception {
        String id = fx.csi().createVolume(replicated("base-cut", 2, "24h").build()).getVolume().getVolumeId();
        var tags = ReplicatedVolumeId.parse(id).orElseThrow().tags();
        String a = tags.get(0);
        String b = tags.get(1);
        String mounted = null;
        try {
            fx.controllerPublish(a, id);
            Path onA = fx.stageAndPublish(a, id);
            mounted = a;
            writeRecords(onA.resolve("records"), 0, 1000);
            fx.round(b, a, id);
            fx.unpublishAndUnstage(a, id);
            mounted = null;
            unpublish(a, id);
            fx.controllerPublish(b, id);                                   // the handoff: A cut P for B and kept it
            String handed = point(b, id);
            assertEquals(handed, point(a, id));

            // the crash, by hand: A's agent killed with its state as before it named P (it held no point as the first primary)
            var agentA = fx.cluster.agent(a);
            agentA.child.kill();
            Path state = tmp.resolve(a).resolve("replication").resolve(id + ".json");
            String text = Files.readString(state);
            assertTrue(text.contains("\"" + handed + "\""), text);
            Files.writeString(state, text.replace("\"" + handed + "\"", "\"\""));
            agentA.start();
            fx.cluster.awaitEveryNode();
            assertEquals(handed, point(a, id), "the handed-over point recorded at start-up\n" + agentA.child.stderr());
            Path replica = tmp.resolve(a).resolve("pool/replicas").resolve(id + "@" + handed + ".img");
            Path image = tmp.resolve(a).resolve("pool/volumes").resolve(id + ".img");
            assertArrayEquals(digest(replica), digest(image), "the image is the point its state names");

            Path onB = fx.stageAndPublish(b, id);
            mounted = b;
            writeRecords(onB.resolve("records"), 1000, 1500);
            fx.unpublishAndUnstage(b, id);
            mounted = null;
            var back = fx.round(a, b, id);
            assertEquals(handed, back.getBasePoint(), "a delta against the handed-over point: " + back);

            unpublish(b, id);
            fx.controllerPublish(a, id);
            Path again = fx.stageAndPublish(a, id);
            mounted = a;
            assertRecords(again.resolve("records"), 1500);
            fx.unpublishAndUnstage(a, id);
            mounted = null;
            unpublish(a, id);
            fx.csi().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            for (String n : List.of(a, b)) {
                assertFalse(fx.agent(n).getReplica(GetReplicaRequest.newBuilder().setVolumeId(id).build()).getPresent());
                assertEquals(List.of(), ClusterHandoffBaseTest.mentioning(tmp, n, id), "nothing of the volume left on " + n);
            }
        } finally {
            if (mounted != null) fx.unpublishAndUnstage(mounted, id);
        }
    }

    static String point(String node, String id) {
        return fx.agent(node).getReplica(GetReplicaRequest.newBuilder().setVolumeId(id).build()).getPoint();
    }

    static void unpublish(String node, String id) {
        fx.csi().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(node).build());
    }
}
