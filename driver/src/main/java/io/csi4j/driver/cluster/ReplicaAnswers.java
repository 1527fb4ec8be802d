package io.csi4j.driver.cluster;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.replication.ReplicationRules.View;
import io.csi4j.proto.cluster.GetReplicaRequest;
import io.csi4j.proto.cluster.GetReplicaResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What every replica's node said of one replicated volume, asked {@code GetReplica} all at once, in the id's order:
 * each node answered (its response), was silent (why), was forgotten ({@code csi4j cluster forget-node}: never asked,
 * lost for good), or is a node this controller does not know. Routing, the moves of the primary and CSI-Addons all read
 * the volume from this one record: the raw answers ({@link #answers}) or the replication rules' {@link #views}.
 */
record ReplicaAnswers(ReplicatedVolumeId id, List<Said> said) {
    /** One node's part. */
    sealed interface Said {}

    record Answered(Agent agent, GetReplicaResponse response) implements Said {}

    record Silent(Agent agent, String why) implements Said {}

    /** A node declared lost for good: never asked ({@code LostNodes}). */
    record Forgotten(String node) implements Said {}

    /** A node tag no known agent carries (asked leniently only: {@link #askKnown}). */
    record Unknown(String tag) implements Said {}

    ReplicaAnswers {
        said = List.copyOf(said);
    }

    /** Asks every node the id names; NOT_FOUND / UNAVAILABLE before asking any when one is a node the cluster does not know. */
    static ReplicaAnswers ask(Agents agents, ReplicatedVolumeId id) {
        return ask(agents, id, true);
    }

    /** Asks every node the id names that is known; the others are {@link Unknown}. */
    static ReplicaAnswers askKnown(Agents agents, ReplicatedVolumeId id) {
        return ask(agents, id, false);
    }

    private static ReplicaAnswers ask(Agents agents, ReplicatedVolumeId id, boolean strict) {
        List<Object> slots = new ArrayList<>();                  // an Agent to ask, or a Said already known
        List<Agent> asked = new ArrayList<>();
        for (String tag : id.tags()) {
            var forgotten = agents.forgottenNode(tag);
            if (forgotten.isPresent()) {
                slots.add(new Forgotten(forgotten.get()));
                continue;
            }
            var agent = agents.byNodeTag(tag);
            if (agent.isEmpty() && strict) throw agents.unknownNode("volume " + id, tag);
            if (agent.isEmpty()) {
                slots.add(new Unknown(tag));
                continue;
            }
            slots.add(agent.get());
            asked.add(agent.get());
        }
        var request = GetReplicaRequest.newBuilder().setVolumeId(id.toString()).build();
        var answers = Fanout.all(asked, a -> a.nodeAgent().getReplica(request));
        // Fanout names the silent nodes in the order they were asked
        var why = answers.silent().iterator();
        List<Said> said = new ArrayList<>();
        for (Object slot : slots) {
            if (!(slot instanceof Agent agent)) said.add((Said) slot);
            else if (answers.results().containsKey(agent)) said.add(new Answered(agent, answers.results().get(agent)));
            else said.add(new Silent(agent, why.next()));
        }
        return new ReplicaAnswers(id, said);
    }

    /** The nodes asked (answering or silent), in the id's order. */
    List<Agent> nodes() {
        List<Agent> nodes = new ArrayList<>();
        for (Said s : said) {
            switch (s) {
                case Answered a -> nodes.add(a.agent());
                case Silent q -> nodes.add(q.agent());
                case Forgotten f -> { }
                case Unknown u -> { }
            }
        }
        return nodes;
    }

    /** Each answering node's response, in the id's order. */
    Map<Agent, GetReplicaResponse> answers() {
        Map<Agent, GetReplicaResponse> answers = new LinkedHashMap<>();
        for (Said s : said) if (s instanceof Answered a) answers.put(a.agent(), a.response());
        return answers;
    }

    List<Agent> silent() {
        return said.stream().filter(s -> s instanceof Silent).map(s -> ((Silent) s).agent()).toList();
    }

    /** Why each silent node did not answer (the message names it). */
    List<String> silentWhy() {
        return said.stream().filter(s -> s instanceof Silent).map(s -> ((Silent) s).why()).toList();
    }

    /** The node ids of the id's replicas on forgotten nodes, in the id's order. */
    List<String> forgotten() {
        return said.stream().filter(s -> s instanceof Forgotten).map(s -> ((Forgotten) s).node()).toList();
    }

    List<String> unknown() {
        return said.stream().filter(s -> s instanceof Unknown).map(s -> ((Unknown) s).tag()).toList();
    }

    /** As the replication rules read it: the nodes asked, in the id's order (forgotten and unknown ones left out). */
    List<View> views() {
        return ReplicaViews.of(nodes(), answers());
    }

    /** The agent of a node asked. */
    Agent agent(String node) {
        return nodes().stream().filter(a -> a.nodeId().equals(node)).findFirst().orElseThrow();
    }

    /** The highest epoch answered (0 when none). */
    long top() {
        return answers().values().stream().mapToLong(GetReplicaResponse::getEpoch).max().orElse(0);
    }

    /** The node whose copy is primary at the highest epoch answered, if one is. */
    Optional<Agent> primary() {
        long top = top();
        return answers().entrySet().stream().filter(e -> e.getValue().getPresent() && e.getValue().getRole().equals("PRIMARY")
                && e.getValue().getEpoch() == top).map(Map.Entry::getKey).findFirst();
    }

    /** The successor a copy at the highest epoch names, when there is no primary there: a handoff in progress. */
    Optional<String> handingOver() {
        long top = top();
        return answers().values().stream().filter(s -> s.getPresent() && s.getEpoch() == top && !s.getSuccessor().isEmpty())
                .map(GetReplicaResponse::getSuccessor).findFirst();
    }

    /** The answering nodes whose copy is a PRIMARY their agent says is confirmed ({@code confirmed_primary}). */
    Set<String> confirmedPrimaries() {
        Set<String> confirmed = new HashSet<>();
        answers().forEach((node, r) -> {
            if (r.getPresent() && r.getRole().equals("PRIMARY") && r.getConfirmedPrimary()) confirmed.add(node.nodeId());
        });
        return confirmed;
    }

    /** A node answered holding a tombstone: the volume was deleted. */
    boolean tombstoned() {
        return answers().values().stream().anyMatch(GetReplicaResponse::getDeleted);
    }
}
