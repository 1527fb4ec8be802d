package io.csi4j.cli.call;

import io.csi4j.cli.output.View;
import io.csi4j.cli.output.Views;
import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.ClusterStatusGrpc;
import io.csi4j.proto.cluster.GetClusterStatusRequest;
import io.csi4j.proto.cluster.GetClusterStatusResponse;
import java.time.Duration;
import java.time.Instant;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code csi4j cluster}: what a cluster controller ({@code serve --mode controller}) knows of its node agents. */
@Command(name = "cluster", description = "A csi4j cluster controller: its node agents.")
public final class ClusterCommand {

    @Command(name = "status", description = "Every node agent the controller knows: node id, address, version, free capacity, "
            + "last answer, how long it has been silent, and whether it serves, is silent, or was refused (a second agent claiming a node). Exits 1 "
            + "when any agent is not serving.")
    int status(@Mixin ClientOptions client) {
        try (var s = client.csi()) {
            GetClusterStatusResponse r = s.call(ClusterStatusGrpc.getGetClusterStatusMethod(), GetClusterStatusRequest.getDefaultInstance());
            client.output().show(r, view(r, Instant.now()));
            return r.getAgentsList().stream().allMatch(a -> a.getState() == AgentStatus.State.SERVING) ? 0 : 1;
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
        return anyCopy ? View.stack(nodes, copies.build("no copies")) : nodes;
    }

    /** Whole seconds the controller has heard nothing from the agent (before any answer: since it first dialled it). */
    static String silentFor(AgentStatus a) {
        return a.getSilentForMillis() / 1000 + "s";
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
