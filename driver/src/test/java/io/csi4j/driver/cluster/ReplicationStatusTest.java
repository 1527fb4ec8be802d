package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.proto.cluster.ReplicaRound;
import io.csi4j.proto.cluster.ReplicatedVolumeStatus;
import io.csi4j.proto.cluster.SecondaryStatus;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The table of what {@code csi4j cluster status} says of a replicated volume from its agents' answers. */
class ReplicationStatusTest {
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of("node-a", "node-b", "node-c"));
    private static final String V = ID.toString();

    private static ReplicaRound round(String role, long epoch, Long lagMillis) {
        var r = ReplicaRound.newBuilder().setVolumeId(V).setRole(role).setEpoch(epoch).setIntervalMillis(5000);
        if (lagMillis != null) r.setHasRound(true).setLagMillis(lagMillis).setLastSyncUnixMillis(1).setLastRoundBytes(4096).setLastRoundMillis(20);
        return r.build();
    }

    /** node → its answer (null: silent; an empty map: answers, holds nothing). */
    private static ReplicatedVolumeStatus status(Map<String, Map<String, ReplicaRound>> answers) {
        var all = ReplicationStatus.of(List.of(V, "not-a-replicated-id"), tag -> new ReplicationStatus.Node(tag, Optional.ofNullable(answers.get(tag))));
        assertEquals(1, all.size());
        return all.get(0);
    }

    private static Map<String, ReplicaRound> holds(ReplicaRound r) {
        return Map.of(V, r);
    }

    @Test
    void inSyncSecondariesAreHealthy() {
        var s = status(Map.of("node-a", holds(round("PRIMARY", 1, null)), "node-b", holds(round("SECONDARY", 1, 3000L)),
                "node-c", holds(round("SECONDARY", 1, null))));
        assertEquals("node-a", s.getPrimaryNodeId());
        assertEquals(1, s.getEpoch());
        assertEquals(5000, s.getIntervalMillis());
        assertFalse(s.getAbnormal(), s.getMessage());
        assertEquals("healthy", s.getMessage());
        assertEquals(List.of(SecondaryStatus.State.IN_SYNC, SecondaryStatus.State.NO_ROUND_YET),
                s.getSecondariesList().stream().map(SecondaryStatus::getState).toList());
        assertEquals(4096, s.getSecondaries(0).getLastRoundBytes());
    }

    @Test
    void lagPastTwoIntervalsIsBehindButTwoIntervalsIsNot() {
        var atTwo = status(Map.of("node-a", holds(round("PRIMARY", 1, null)), "node-b", holds(round("SECONDARY", 1, 10_000L)),
                "node-c", holds(round("SECONDARY", 1, 10_001L))));
        assertEquals(SecondaryStatus.State.IN_SYNC, atTwo.getSecondaries(0).getState());
        assertEquals(SecondaryStatus.State.BEHIND, atTwo.getSecondaries(1).getState());
        assertTrue(atTwo.getAbnormal());
        assertTrue(atTwo.getMessage().contains("node 'node-c' is 10s behind"), atTwo.getMessage());
    }

    @Test
    void silentAndMissingReplicasAreAbnormalNamingTheirNodes() {
        Map<String, Map<String, ReplicaRound>> answers = new HashMap<>();
        answers.put("node-b", holds(round("PRIMARY", 2, null)));       // a handoff made node-b primary at epoch 2
        answers.put("node-a", Map.of());                               // answers, holds nothing
        var s = status(answers);                                       // node-c silent
        assertEquals("node-b", s.getPrimaryNodeId());
        assertEquals(2, s.getEpoch());
        assertEquals(List.of("node-a", "node-c"), s.getSecondariesList().stream().map(SecondaryStatus::getNodeId).toList());
        assertEquals(List.of(SecondaryStatus.State.MISSING, SecondaryStatus.State.SILENT),
                s.getSecondariesList().stream().map(SecondaryStatus::getState).toList());
        assertTrue(s.getAbnormal());
        assertTrue(s.getMessage().contains("node 'node-a' is missing: its node holds no copy"), s.getMessage());
        assertTrue(s.getMessage().contains("node 'node-c' is missing: its agent does not answer"), s.getMessage());
    }

    @Test
    void noPrimaryAtTheHighestEpochAndAFencedCopyAreShown() {
        var s = status(Map.of("node-a", holds(round("PRIMARY", 1, null)), "node-b", holds(round("SECONDARY", 2, 1000L)),
                "node-c", holds(round("FENCED", 2, null))));
        assertEquals("", s.getPrimaryNodeId());
        assertTrue(s.getAbnormal());
        assertTrue(s.getMessage().contains("no node answers as its primary at epoch 2"), s.getMessage());
        assertEquals(3, s.getSecondariesCount());
        assertEquals(SecondaryStatus.State.OTHER, s.getSecondaries(0).getState());   // the old primary below the epoch
        assertEquals(SecondaryStatus.State.OTHER, s.getSecondaries(2).getState());
    }
}
