package io.csi4j.driver.cluster;

import java.time.Duration;
import java.util.Optional;

/**
 * How long each node's agent has said nothing, as the controller sees it, and the waits that follow from it
 * (docs/cluster.md, "Waits"). The controller asks every identified agent csi.v1.Identity/Probe each {@link #HEARTBEAT}
 * (one at a time per agent, each bounded by {@link #HEARTBEAT_DEADLINE}); any answer to anything counts. A call to an
 * agent that has then been silent for longer than {@link #SILENCE} while the call was outstanding fails UNAVAILABLE
 * naming the node. A decision that must wait for a node to be gone for good (a failover) counts from
 * {@link #silentFor}: the node's last answer, not a call's deadline.
 */
public final class Liveness {
    /**
     * The longest silence a call waits through. Under the CSI sidecars' own default deadlines (10 s for the
     * provisioner, snapshotter and resizer, 15 s for the attacher), so a silent node is reported as such instead of
     * as their DEADLINE_EXCEEDED; five missed heartbeats, far above a live JVM's pauses.
     */
    public static final Duration SILENCE = Duration.ofSeconds(5);
    /** How often an identified agent is asked for a Probe, and how often outstanding calls are checked. */
    public static final Duration HEARTBEAT = Duration.ofSeconds(1);
    /** A heartbeat's own deadline; the next one is sent only after it ends. */
    static final Duration HEARTBEAT_DEADLINE = Duration.ofSeconds(2);

    private final Agents agents;

    Liveness(Agents agents) {
        this.agents = agents;
    }

    /**
     * How long the agent serving {@code nodeId} has said nothing: since its last answer, or, before any, since this
     * controller first dialled it. Empty for a node no agent serves (never identified, or not in the cluster).
     */
    public Optional<Duration> silentFor(String nodeId) {
        return agents.nodes().stream().filter(a -> nodeId.equals(a.nodeId())).findFirst().map(Agent::silentFor);
    }
}
