package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.id.ReplicatedVolumeId;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Review 2026-11-27 s9 (docs/review-2026-11-27-s9.md). F1: forget-node must not be accepted on the word of an
 * unconfirmed primary. ClusterConfirmationTest's sequence: A primary at epoch 1 goes away, B is failed over to at
 * epoch 2 and takes writes, B is lost for good, A comes back PRIMARY at epoch 1, unconfirmed. A is the only answering
 * copy, "PRIMARY at the highest epoch answered"; were B forgotten, it would count as answered for Confirm and A's stale
 * copy would be confirmed writable: B's acknowledged writes silently gone. F3: a node no agent claims is not forgotten
 * while an address never answered (it may be that node, live).
 */
class LostNodesReviewTest {
    private static final ReplicatedVolumeId TWO = ReplicatedVolumeId.generate(List.of("node-a", "node-b"));
    private static final ReplicatedVolumeId THREE = ReplicatedVolumeId.generate(List.of("node-a", "node-b", "node-c"));

    @Test
    void anUnconfirmedPrimaryDoesNotProveTheForgottenNodeHoldsNoNewerEpoch() {
        String two = TWO.toString();
        assertEquals(List.of(two), LostNodes.withoutPrimary("node-b", List.of(new LostNodes.Copy(two, "PRIMARY", 1, true)), Set.of()),
                "A back, unconfirmed: B may hold epoch 2");
        assertEquals(List.of(), LostNodes.withoutPrimary("node-b", List.of(new LostNodes.Copy(two, "PRIMARY", 1, false)), Set.of()),
                "A confirmed: no failover happened while it was away");
        String three = THREE.toString();
        assertEquals(List.of(three), LostNodes.withoutPrimary("node-c", List.of(new LostNodes.Copy(three, "PRIMARY", 1, true),
                new LostNodes.Copy(three, "SECONDARY", 1, false)), Set.of()), "3 replicas: a failover to C need not have reached B");
        assertEquals(List.of(), LostNodes.withoutPrimary("node-c", List.of(new LostNodes.Copy(three, "PRIMARY", 1, true)), Set.of(three)),
                "deleted: nothing to protect");
    }

    @Test
    void acceptingPossibleLossLetsAnUnconfirmedPrimaryCountButNeverNoPrimary() {
        String two = TWO.toString();
        // A restarted while B, its only other replica, was lost: without the operator's choice it waits for B for ever
        assertEquals(List.of(), LostNodes.withoutPrimary("node-b", List.of(new LostNodes.Copy(two, "PRIMARY", 1, true)), Set.of(), true),
                "accepted: A's copy counts");
        assertEquals(List.of(two), LostNodes.withoutPrimary("node-b", List.of(new LostNodes.Copy(two, "SECONDARY", 1, false)), Set.of(), true),
                "no answering primary at all: still refused (routing would find none)");
        String three = THREE.toString();
        assertEquals(List.of(three), LostNodes.withoutPrimary("node-c", List.of(new LostNodes.Copy(three, "PRIMARY", 1, true),
                new LostNodes.Copy(three, "SECONDARY", 2, false)), Set.of(), true),
                "an unconfirmed primary below the highest epoch answered never counts");
        assertEquals(List.of(), LostNodes.withoutPrimary("node-c", List.of(new LostNodes.Copy(three, "PRIMARY", 2, true),
                new LostNodes.Copy(three, "SECONDARY", 2, false)), Set.of(), true), "at the highest epoch answered: counts");
    }

    @Test
    void whatTheRefusalPreventsConfirmCountsAForgottenNodeAsAnswered() {
        // the scheduler adds the forgotten nodes to the answered ones (ReplicationScheduler.run): A alone answering
        var a = new Confirm.Copy("node-a", "PRIMARY", 1, true);
        assertTrue(Confirm.which(TWO, Set.of("node-a"), List.of(a), false).isEmpty(), "B silent: A waits");
        assertEquals(a, Confirm.which(TWO, Set.of("node-a", "node-b"), List.of(a), false).orElseThrow(),
                "B forgotten: A confirmed, so forgetting B must have been refused while A was unconfirmed");
    }

    @Test
    void aNodeNoAgentClaimsIsNotForgottenWhileAnAddressNeverAnswered() {
        Duration delay = Duration.ofSeconds(8);
        var seen = List.of(new LostNodes.Seen("node-a", "127.0.0.1:7001", true, Duration.ZERO));
        var refused = assertThrows(DomainException.class,
                () -> LostNodes.checkForgettable("node-b", seen, List.of("127.0.0.1:7002"), delay), "127.0.0.1:7002 may be node-b");
        assertEquals(DomainException.Kind.PRECONDITION, refused.kind());
        assertTrue(refused.getMessage().contains("127.0.0.1:7002"), refused.getMessage());
        assertDoesNotThrow(() -> LostNodes.checkForgettable("node-b", seen, List.of(), delay), "every address answered: nothing is node-b");
        var silentB = List.of(new LostNodes.Seen("node-b", "127.0.0.1:7002", false, delay));
        assertDoesNotThrow(() -> LostNodes.checkForgettable("node-b", silentB, List.of("127.0.0.1:7003"), delay),
                "b is claimed and silent for the delay: the unidentified address is not it");
    }
}
