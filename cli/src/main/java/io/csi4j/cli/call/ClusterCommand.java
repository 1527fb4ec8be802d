package io.csi4j.cli.call;

import io.csi4j.cli.output.View;
import io.csi4j.cli.output.Views;
import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.ClusterStatusGrpc;
import io.csi4j.proto.cluster.ForgetClusterNodeRequest;
import io.csi4j.proto.cluster.ForgetClusterNodeResponse;
import io.csi4j.proto.cluster.GetClusterStatusRequest;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import io.csi4j.proto.cluster.ReplicatedVolumeStatus;
import io.csi4j.proto.cluster.SecondaryStatus;
import java.time.Duration;
import java.time.Instant;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code csi4j cluster}: what a cluster controller ({@code serve --mode controller}) knows of its node agents. */
@Command(name = "cluster", description = "A csi4j cluster controller: its node agents.")
public final class ClusterCommand {

    @Command(name = "status", description = "Every node agent the controller knows: node id, address, version, free capacity, "
            + "last answer, how long it has been silent, and whether it serves, is silent, or was refused (a second agent claiming a node, "
            + "or a forgotten node's); the forgotten nodes; "
            + "then every replicated volume: its primary and epoch, and each secondary's state, lag, last sync, last round's bytes and "
            + "duration, and the volume's condition. Exits 1 when any agent is not serving (a forgotten node's does not count).")
    int status(@Mixin ClientOptions client) {
        try (var s = client.csi()) {
            GetClusterStatusResponse r = s.call(ClusterStatusGrpc.getGetClusterStatusMethod(), GetClusterStatusRequest.getDefaultInstance());
            client.output().show(r, view(r, Instant.now()));
            // a forgotten node's agent (silent, or refused if it came back) is expected not to serve
            var forgotten = r.getForgottenNodesList().stream().map(f -> f.getNodeId()).collect(java.util.stream.Collectors.toSet());
            return r.getAgentsList().stream().allMatch(a -> a.getState() == AgentStatus.State.SERVING
                    || forgotten.contains(a.getNodeId())) ? 0 : 1;
        }
    }

    @Command(name = "forget-node", description = "Declares a node permanently lost (docs/replication.md, \"A node lost for good\"): "
            + "every other answering agent records it durably; tombstones of volumes deleted while it was down may then go (it counts "
            + "as a node holding nothing), and if its agent ever answers again it is refused (its copies count as gone). Refused "
            + "(FAILED_PRECONDITION) while an agent of that node answers, or before it has been silent for the controller's "
            + "--failover-after, or while it may hold the primary of a live replicated volume. There is no undo: a machine brought "
            + "back joins afresh under a new node id.")
    int forgetNode(@Mixin ClientOptions client, @Parameters(paramLabel = "NODE", description = "the node id to forget") String node,
                   @Option(names = "--accept-possible-loss", description = "also when a volume's only answering primary is "
                           + "unconfirmed (it restarted while NODE was away): NODE may have been failed over to at a newer epoch, "
                           + "and what it took since is given up") boolean acceptPossibleLoss) {
        try (var s = client.csi()) {
            ForgetClusterNodeResponse r = s.call(ClusterStatusGrpc.getForgetNodeMethod(),
                    ForgetClusterNodeRequest.newBuilder().setNodeId(node).setAcceptPossibleLoss(acceptPossibleLoss).build());
            client.output().show(r, View.line("node '" + node + "' forgotten at " + Instant.ofEpochSecond(r.getForgottenAtUnixSeconds())
                    + "; recorded by " + String.join(",", r.getRecordedByList())));
            return 0;
        }
    }

    static View view(GetClusterStatusResponse r, Instant now) {
        var grid = View.grid("NODE", "ADDRESS", "VERSION", "STATE", "AVAILABLE", "LAST ANSWER", "SILENT FOR", "REASON");
        for (AgentStatus a : r.getAgentsList()) {
            grid.row(a.getNodeId().isEmpty() ? "-" : a.getNodeId(), a.getAddress(), a.getVersion().isEmpty() ? "-" : a.getVersion(),
                    a.getState().name().toLowerCase(), a.getHasAvailableCapacity() ? Views.bytes(a.getAvailableCapacity()) : "-",
                    ago(a.getLastAnswerUnixMillis(), now),
                    silentFor(a), a.getReason().isEmpty() ? "-" : a.getReason());
        }
        var copies = View.grid("NODE", "COPY", "DIRECTION", "PEER", "SOURCE", "DONE", "OF");
        boolean anyCopy = false;
        for (AgentStatus a : r.getAgentsList()) {
            for (var c : a.getCopiesList()) {
                anyCopy = true;
                copies.row(a.getNodeId(), c.getName(), c.getIncoming() ? "in" : "out", c.getPeerNodeId(), c.getSourceId(),
                        Views.bytes(c.getBytesDone()), c.getBytesTotal() == 0 ? "-" : Views.bytes(c.getBytesTotal()));
            }
        }
        var nodes = View.stack(View.line("nodes: " + String.join(",", r.getDiscoveryList())), grid.build("no agents"));
        if (r.getForgottenNodesCount() > 0) {
            nodes = View.stack(nodes, View.line("forgotten (csi4j cluster forget-node): " + String.join(", ", r.getForgottenNodesList()
                    .stream().map(f -> f.getNodeId() + " at " + Instant.ofEpochSecond(f.getForgottenAtUnixSeconds())).toList())));
        }
        View shown = anyCopy ? View.stack(nodes, copies.build("no copies")) : nodes;
        if (r.getVolumesCount() == 0) return shown;
        // one row per secondary: the volume's primary and epoch repeated, its condition on its first row
        var replicas = View.grid("VOLUME", "PRIMARY", "EPOCH", "INTERVAL", "SECONDARY", "STATE", "LAG", "LAST SYNC", "BYTES",
                "TOOK", "CONDITION");
        for (ReplicatedVolumeStatus v : r.getVolumesList()) {
            String primary = v.getPrimaryNodeId().isEmpty() ? "-" : v.getPrimaryNodeId();
            String condition = v.getAbnormal() ? "abnormal: " + v.getMessage() : "healthy";
            for (SecondaryStatus s : v.getSecondariesList()) {
                boolean round = s.getHasRound();
                replicas.row(v.getVolumeId(), primary, Long.toString(v.getEpoch()), v.getIntervalMillis() / 1000 + "s", s.getNodeId(),
                        s.getState().name().toLowerCase(), round ? millis(s.getLagMillis()) : "-",
                        round ? ago(s.getLastSyncUnixMillis(), now) : "-", round ? Views.bytes(s.getLastRoundBytes()) : "-",
                        round ? millis(s.getLastRoundMillis()) : "-", condition);
                condition = "";
            }
            if (v.getSecondariesCount() == 0) {
                replicas.row(v.getVolumeId(), primary, Long.toString(v.getEpoch()), v.getIntervalMillis() / 1000 + "s", "-", "-", "-",
                        "-", "-", "-", condition);
            }
        }
        return View.stack(shown, replicas.build("no replicated volumes"));
    }

    /** Whole seconds the controller has heard nothing from the agent (before any answer: since it first dialled it). */
    static String silentFor(AgentStatus a) {
        return a.getSilentForMillis() / 1000 + "s";
    }

    static String millis(long millis) {
        return millis < 1000 ? millis + "ms" : String.format(java.util.Locale.ROOT, "%.1fs", millis / 1000.0);
    }

    static String ago(long millis, Instant now) {
        if (millis == 0) return "never";
        Duration d = Duration.between(Instant.ofEpochMilli(millis), now);
        if (d.isNegative()) d = Duration.ZERO;
        if (d.toSeconds() < 1) return d.toMillis() + "ms ago";
        if (d.toMinutes() < 1) return d.toSeconds() + "s ago";
        if (d.toHours() < 1) return d.toMinutes() + "m" + d.toSecondsPart() + "s ago";
        return d.toHours() + "h" + d.toMinutesPart() + "m ago";
    }
}
