package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ObjectId;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.MutualTls;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Logger;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The node directory of the cluster controller: which agent serves which node. Agents are found from a list
 * of {@code host:port} entries, each host resolving to one or more addresses (a headless Service's name
 * resolves to every agent pod); each agent says which node it is. Refreshed in the background, whenever
 * a request names a node nobody has claimed yet, and when a call finds an agent silent. Of several agents
 * claiming one node, {@link Claims} decides which one serves it.
 */
public final class Agents implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Agents.class.getName());
    /** A request for an unknown node refreshes at most this often, so a flood of bad ids is not a flood of dials. */
    private static final Duration ON_DEMAND_REFRESH = Duration.ofSeconds(1);
    private static final Duration SILENT_RETRY = Duration.ofSeconds(2);

    /** One {@code --agents} entry. */
    public record Entry(String host, int port) {
        public static List<Entry> parseList(String text) {
            List<Entry> entries = new ArrayList<>();
            for (String item : text.split(",")) {
                if (item.isBlank()) continue;
                Endpoint parsed = Endpoint.parse("tcp://" + item.strip());
                if (!(parsed instanceof Endpoint.Tcp tcp)) throw new IllegalArgumentException("agent '" + item + "' is not host:port");
                entries.add(new Entry(tcp.host(), tcp.port()));
            }
            if (entries.isEmpty()) throw new IllegalArgumentException("no agents in '" + text + "'");
            return List.copyOf(entries);
        }
    }

    private final List<Entry> entries;
    private final MutualTls tls;
    private final Duration callTimeout;
    /** Every dialled address (ip:port) and its agent, identified or not; guarded by this. */
    private final Map<String, Agent> byAddress = new LinkedHashMap<>();
    /** What readers see: replaced whole at the end of each refresh, so no request waits for one. */
    private volatile List<Agent> all = List.of();
    private volatile Map<String, Agent> byTag = Map.of();
    private volatile Map<String, Agent> byTopology = Map.of();
    private volatile long lastRefresh;
    /** Node id to the address serving it after the last refresh: a live holder keeps its node ({@link Claims}). */
    private Map<String, String> holders = Map.of();
    private final Thread refresher;
    /** Heartbeats every identified agent and cuts calls to a silent one ({@link Agent#tick}). */
    private final Thread ticker;
    private final Liveness liveness = new Liveness(this);
    /**
     * The nodes declared permanently lost, as the agents hold them (the scheduler reads them each tick, {@link
     * #forgotten(Map)}): an agent of such a node is refused, never routed to, listed or swept ({@link LostNodes}).
     */
    private volatile Map<String, java.time.Instant> forgotten = Map.of();

    public Agents(List<Entry> entries, MutualTls tls, Duration callTimeout, Duration refreshEvery) {
        this.entries = List.copyOf(entries);
        this.tls = tls;
        this.callTimeout = callTimeout;
        refresh();
        this.refresher = Thread.ofVirtual().name("csi4j-agents").start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    // while an agent has never answered (starting, or the controller came first), look again soon
                    Thread.sleep(unidentified().isEmpty() ? refreshEvery : SILENT_RETRY.compareTo(refreshEvery) < 0 ? SILENT_RETRY : refreshEvery);
                } catch (InterruptedException e) {
                    return;
                }
                refresh();
            }
        });
        this.ticker = Thread.ofVirtual().name("csi4j-agents-liveness").start(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(Liveness.HEARTBEAT);
                } catch (InterruptedException e) {
                    return;
                }
                for (Agent agent : all) agent.tick();
            }
        });
    }

    /** How long each node has said nothing: what a failover counts from. */
    public Liveness liveness() {
        return liveness;
    }

    /**
     * Resolves every entry, dials new addresses, and asks every agent which node it is. An address that no
     * longer resolves is dropped, unless it was a node's only agent: that node stays known (and its calls fail
     * UNAVAILABLE naming it) until another address says it is that node. A pod that comes back with a new
     * address is then picked up, and a node never silently vanishes from lists. Only this method writes.
     */
    public synchronized void refresh() {
        if (closed) return;
        Map<String, Agent> seen = new LinkedHashMap<>();
        for (Entry entry : entries) {
            InetAddress[] addresses;
            try {
                addresses = InetAddress.getAllByName(entry.host());
            } catch (UnknownHostException e) {
                LOG.warning(() -> "agents: cannot resolve " + entry.host() + ": " + e.getMessage());
                continue;
            }
            for (InetAddress address : addresses) {
                var endpoint = new Endpoint.Tcp(address.getHostAddress(), entry.port());
                String key = endpoint.host() + ":" + endpoint.port();
                // the certificate is checked against the name as configured: one name for all pods of a Service
                seen.put(key, byAddress.computeIfAbsent(key, k -> new Agent(endpoint, entry.host(), tls, callTimeout, this::refreshInBackground)));
            }
        }
        Fanout.each(List.copyOf(seen.values()), agent -> {
            if (!agent.identify()) LOG.fine(() -> "agents: " + agent.describe() + " does not answer: " + agent.problem());
            return null;
        });
        Set<String> claimed = new HashSet<>();
        seen.values().forEach(a -> { if (a.nodeId() != null) claimed.add(a.nodeId()); });
        byAddress.entrySet().removeIf(e -> {
            Agent agent = e.getValue();
            if (seen.containsKey(e.getKey())) return false;
            if (agent.nodeId() != null && !claimed.contains(agent.nodeId())) {
                LOG.warning(() -> "agents: " + agent.describe() + " no longer resolves; keeping its node known until another address serves it");
                return false;
            }
            agent.close();
            return true;
        });
        List<Claims.Claimant> claimants = new ArrayList<>();
        for (Agent agent : byAddress.values()) {
            if (agent.nodeId() != null) claimants.add(new Claims.Claimant(agent.address(), agent.nodeId(), agent.answering(), agent.claimedSince()));
        }
        Claims.Decision decision = Claims.decide(holders, claimants);
        Map<String, Agent> tags = new HashMap<>();
        Map<String, Agent> topologies = new HashMap<>();
        for (Agent agent : byAddress.values()) {
            if (agent.nodeId() == null) {
                agent.refuse(null);
                continue;
            }
            String claim = decision.refused().get(agent.address());
            String reason = claim != null ? claim : LostNodes.refusal(agent.nodeId(), forgotten);
            if (reason != null) {
                if (!reason.equals(agent.refusal())) LOG.warning(() -> "agents: refusing " + agent.address() + ": " + reason);
                agent.refuse(reason);
                continue;
            }
            agent.refuse(null);
            tags.put(ObjectId.nodeTag(agent.nodeId()), agent);
            topologies.put(agent.topologyValue(), agent);
        }
        holders = decision.holders();
        byTag = Map.copyOf(tags);
        byTopology = Map.copyOf(topologies);
        all = List.copyOf(byAddress.values());
        lastRefresh = System.nanoTime();
    }

    /** The nodes declared permanently lost, with when (empty until the scheduler's first listing). */
    public Map<String, java.time.Instant> forgotten() {
        return forgotten;
    }

    /**
     * The node declared lost for good that an id's node tag names, if any: the tag {@link ObjectId#nodeTag} gives it,
     * or its hashed form (a replicated id may carry that for a DNS name, {@code ReplicatedVolumeId}). The one answer to
     * "is the node of this id (or of this replica) forgotten", for ordinary ids and replicas alike.
     */
    public Optional<String> forgottenNode(String nodeTag) {
        return forgotten.keySet().stream().filter(node -> ObjectId.nodeTag(node).equals(nodeTag) || ObjectId.hashedTag(node).equals(nodeTag))
                .findFirst();
    }

    /**
     * Adds marks (a set that only grows); a change refuses their agents at once. Merged under the lock, never replaced:
     * ForgetNode and the scheduler's tick both call this, and a tick's union computed from listings taken before a
     * ForgetNode would otherwise drop that node's new mark until the next tick.
     */
    synchronized void forgotten(Map<String, java.time.Instant> marks) {
        var merged = LostNodes.union(List.of(forgotten, marks));
        if (merged.equals(forgotten)) return;
        forgotten = Map.copyOf(merged);
        refresh();
    }

    /** Identified agents (answering or not), ordered by node id: the order of merged lists. */
    public List<Agent> nodes() {
        return byTag.values().stream().distinct().sorted(Comparator.comparing(Agent::nodeId)).toList();
    }

    /** Every dialled agent: serving, silent, or refused (for {@code csi4j cluster status}). */
    public List<Agent> all() {
        return all;
    }

    /**
     * {@code csi4j_agent_silent_seconds{node}}: how long each identified agent has said nothing (a heartbeat answers
     * every second, so above 1-2 s it is silent), in the Prometheus text format.
     */
    public String prometheusText() {
        StringBuilder out = new StringBuilder(256);
        out.append("# HELP csi4j_agent_silent_seconds Seconds since the node's agent last answered the controller (heartbeat every second).\n")
                .append("# TYPE csi4j_agent_silent_seconds gauge\n");
        for (Agent agent : nodes()) {
            out.append("csi4j_agent_silent_seconds{node=\"").append(agent.nodeId().replace("\\", "\\\\").replace("\"", "\\\""))
                    .append("\"} ").append(agent.silentFor().toMillis() / 1000.0).append('\n');
        }
        return out.toString();
    }

    /** The {@code --nodes} entries as given. */
    public List<Entry> entries() {
        return entries;
    }

    /** Agents that never said which node they are (down since the controller started, or not csi4j). */
    public List<Agent> unidentified() {
        return all.stream().filter(a -> a.nodeId() == null).toList();
    }

    /** True when at least one agent has said which node it is. */
    public boolean ready() {
        return !byTag.isEmpty();
    }

    /** The agent serving the node of {@code nodeTag} (as ids carry it), refreshing once if nobody claims it. */
    public Optional<Agent> byNodeTag(String nodeTag) {
        Agent agent = byTag.get(nodeTag);
        if (agent == null) {
            refreshIfStale();
            agent = byTag.get(nodeTag);
        }
        return Optional.ofNullable(agent);
    }

    /** The agent whose node has this value under topology.csi4j.io/node. */
    public Optional<Agent> byTopologyValue(String value) {
        Agent agent = byTopology.get(value);
        if (agent == null) {
            refreshIfStale();
            agent = byTopology.get(value);
        }
        return Optional.ofNullable(agent);
    }

    /** The owner of an object id: NOT_FOUND for a node not in the cluster, UNAVAILABLE if it may be behind a silent agent. */
    public Agent owner(ObjectId id, String what) {
        return byNodeTag(id.nodeTag()).orElseThrow(() -> unknownNode(what + " " + id, id.nodeTag()));
    }

    CsiException unknownNode(String subject, String node) {
        List<Agent> silent = unidentified();
        if (!silent.isEmpty()) {
            return CsiException.unavailable(subject + " names node '" + node + "', which no answering agent serves; not answering: "
                    + silent.stream().map(a -> a.address() + " (" + a.problem() + ")").toList());
        }
        return CsiException.notFound(subject + " names node '" + node + "', which is not in this cluster (nodes: "
                + nodes().stream().map(Agent::nodeId).toList() + ")");
    }

    /** Any identified agent, for requests whose answer does not depend on the node (ids that are not ours). */
    public Agent any() {
        return nodes().stream().findFirst().orElseThrow(() -> CsiException.unavailable("no node agent answers: "
                + unidentified().stream().map(a -> a.address() + " (" + a.problem() + ")").toList()));
    }

    /** For calls that need every node (merged lists): UNAVAILABLE naming agents that never answered. */
    public void requireAllIdentified(String what) {
        if (unidentified().isEmpty()) return;
        refreshIfStale();
        List<Agent> silent = unidentified();
        if (!silent.isEmpty()) {
            throw CsiException.unavailable(what + " needs every node; not answering: "
                    + silent.stream().map(a -> a.address() + " (" + a.problem() + ")").toList());
        }
    }

    private final AtomicBoolean backgroundRefresh = new AtomicBoolean();

    /**
     * A call found an agent silent: resolve the names again and ask every agent which node it is, without making
     * the caller wait (a pod that moved is found at its new address, a second claimant of a dead holder's node
     * takes over). At most one at a time, and at most once a second.
     */
    void refreshInBackground() {
        if (!backgroundRefresh.compareAndSet(false, true)) return;
        Thread.ofVirtual().name("csi4j-agents-on-silence").start(() -> {
            try {
                refreshIfStale();
            } finally {
                backgroundRefresh.set(false);
            }
        });
    }

    /** Under the lock: of many requests for an unknown node at once, one refreshes and the others use its result. */
    private void refreshIfStale() {
        TransportThread.mayWait();  // before the lock: a refresh may hold it for seconds
        refreshIfStaleLocked();
    }

    private synchronized void refreshIfStaleLocked() {
        if (System.nanoTime() - lastRefresh >= ON_DEMAND_REFRESH.toNanos()) refresh();
    }

    private boolean closed;  // guarded by this

    @Override
    public synchronized void close() {
        closed = true;
        refresher.interrupt();
        ticker.interrupt();
        byAddress.values().forEach(Agent::close);
        byAddress.clear();
    }
}
