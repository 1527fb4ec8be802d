package io.csi4j.cli.call;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.ForgottenNode;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The forgotten nodes in {@code csi4j cluster status}'s table (docs/replication.md, "A node lost for good"). */
class ClusterForgottenViewTest {
    private static String render(GetClusterStatusResponse r) {
        var text = new StringWriter();
        ClusterCommand.view(r, Instant.ofEpochSecond(1_800_000_100L)).render(new PrintWriter(text));
        return text.toString();
    }

    @Test
    void forgottenNodesAreOneLineAfterTheAgentsAndAbsentWhenNone() {
        var agents = GetClusterStatusResponse.newBuilder().addDiscovery("a:1")
                .addAgents(AgentStatus.newBuilder().setNodeId("n1").setAddress("a:1").setState(AgentStatus.State.SERVING))
                .addAgents(AgentStatus.newBuilder().setNodeId("n3").setAddress("a:3").setState(AgentStatus.State.REFUSED)
                        .setReason("node 'n3' was forgotten (csi4j cluster forget-node)"));
        assertFalse(render(agents.build()).lines().anyMatch(l -> l.startsWith("forgotten (")), render(agents.build()));
        String text = render(agents.addForgottenNodes(ForgottenNode.newBuilder().setNodeId("n3").setForgottenAtUnixSeconds(1_800_000_000L))
                .addForgottenNodes(ForgottenNode.newBuilder().setNodeId("n4").setForgottenAtUnixSeconds(1_800_000_050L)).build());
        assertTrue(text.lines().anyMatch(l -> l.equals("forgotten (csi4j cluster forget-node): n3 at 2027-01-15T08:00:00Z, "
                + "n4 at 2027-01-15T08:00:50Z")), text);
        assertTrue(text.lines().anyMatch(l -> l.matches("n3 +a:3 .*refused.*node 'n3' was forgotten.*")), text);
    }
}
