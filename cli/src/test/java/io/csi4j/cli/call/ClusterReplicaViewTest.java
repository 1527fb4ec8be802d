package io.csi4j.cli.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import io.csi4j.proto.cluster.ReplicatedVolumeStatus;
import io.csi4j.proto.cluster.SecondaryStatus;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The replicated volumes' part of {@code csi4j cluster status}'s table: one row per secondary. */
class ClusterReplicaViewTest {

    @Test
    void eachSecondaryIsARowWithItsRoundOrDashesAndTheConditionOnTheFirst() {
        Instant now = Instant.ofEpochMilli(1_000_000_000L);
        var r = GetClusterStatusResponse.newBuilder().addDiscovery("a:1")
                .addAgents(AgentStatus.newBuilder().setNodeId("n1").setAddress("a:1").setState(AgentStatus.State.SERVING))
                .addVolumes(ReplicatedVolumeStatus.newBuilder().setVolumeId("vol-x-n1__n2__n3").setPrimaryNodeId("n1").setEpoch(3)
                        .setIntervalMillis(30_000).setAbnormal(true).setMessage("replica on node 'n3' is missing: its agent does not answer")
                        .addSecondaries(SecondaryStatus.newBuilder().setNodeId("n2").setState(SecondaryStatus.State.IN_SYNC).setHasRound(true)
                                .setLagMillis(12_345).setLastSyncUnixMillis(now.toEpochMilli() - 4000).setLastRoundBytes(1L << 20)
                                .setLastRoundMillis(250))
                        .addSecondaries(SecondaryStatus.newBuilder().setNodeId("n3").setState(SecondaryStatus.State.SILENT)))
                .build();
        var text = new StringWriter();
        ClusterCommand.view(r, now).render(new PrintWriter(text));
        List<String> lines = text.toString().lines().toList();
        int header = lines.indexOf(lines.stream().filter(l -> l.startsWith("VOLUME")).findFirst().orElseThrow(() -> new AssertionError(text)));
        assertTrue(lines.get(header).matches("VOLUME +PRIMARY +EPOCH +INTERVAL +SECONDARY +STATE +LAG +LAST SYNC +BYTES +TOOK +CONDITION"),
                lines.get(header));
        assertTrue(lines.get(header + 1).matches("vol-x-n1__n2__n3 +n1 +3 +30s +n2 +in_sync +12\\.3s +4s ago +1Mi +250ms +abnormal: replica on node 'n3' "
                + "is missing: its agent does not answer"), lines.get(header + 1));
        assertTrue(lines.get(header + 2).matches("vol-x-n1__n2__n3 +n1 +3 +30s +n3 +silent +- +- +- +-\\s*"), lines.get(header + 2));
        assertEquals(header + 3, lines.size(), text.toString());
    }
}
