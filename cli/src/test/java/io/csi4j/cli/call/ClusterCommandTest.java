package io.csi4j.cli.call;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ClusterCommandTest {

    @Test
    void tableShowsEveryAgentWithItsStateAndAge() {
        Instant now = Instant.ofEpochMilli(1_000_000_000L);
        var r = GetClusterStatusResponse.newBuilder().addDiscovery("csi4j-agents:7443")
                .addAgents(AgentStatus.newBuilder().setNodeId("n1").setAddress("10.0.0.1:7443").setVersion("1.2.3")
                        .setState(AgentStatus.State.SERVING).setHasAvailableCapacity(true).setAvailableCapacity(2L << 30)
                        .setLastAnswerUnixMillis(now.toEpochMilli() - 1500).setSilentForMillis(1500))
                .addAgents(AgentStatus.newBuilder().setNodeId("n1").setAddress("10.0.0.2:7443").setVersion("1.2.3")
                        .setState(AgentStatus.State.REFUSED).setReason("node 'n1' is already served by 10.0.0.1:7443")
                        .setLastAnswerUnixMillis(now.toEpochMilli() - 125_000).setSilentForMillis(125_000))
                .addAgents(AgentStatus.newBuilder().setAddress("10.0.0.3:7443").setState(AgentStatus.State.SILENT)
                        .setReason("UNAVAILABLE: io exception").setSilentForMillis(42_000))
                .build();
        var text = new StringWriter();
        ClusterCommand.view(r, now).render(new PrintWriter(text));
        var lines = text.toString().lines().toList();
        assertEquals("nodes: csi4j-agents:7443", lines.get(0));
        assertTrue(lines.get(2).startsWith("NODE"), lines.get(2));
        assertTrue(lines.get(3).matches("n1 +10\\.0\\.0\\.1:7443 +1\\.2\\.3 +serving +2Gi +1s ago +1s +-"), lines.get(3));
        assertTrue(lines.get(4).contains("refused") && lines.get(4).contains("2m5s ago") && lines.get(4).contains(" 125s ") && lines.get(4).endsWith("10.0.0.1:7443"), lines.get(4));
        assertTrue(lines.get(5).startsWith("-") && lines.get(5).contains("silent") && lines.get(5).contains("never")
                && lines.get(5).contains(" 42s "), lines.get(5));
    }

    @Test
    void agesRead() {
        Instant now = Instant.ofEpochMilli(10_000_000L);
        assertEquals("never", ClusterCommand.ago(0, now));
        assertEquals("250ms ago", ClusterCommand.ago(now.toEpochMilli() - 250, now));
        assertEquals("0ms ago", ClusterCommand.ago(now.toEpochMilli() + 50, now));
        assertEquals("1h0m ago", ClusterCommand.ago(now.toEpochMilli() - 3_600_000, now));
    }
}
