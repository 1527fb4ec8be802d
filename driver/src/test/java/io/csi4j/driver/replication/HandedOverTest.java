package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.MemoryPool;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.mobility.SourceNode;
import io.csi4j.driver.replication.ReplicaState.Role;
import io.csi4j.driver.replication.ReplicationRules.Failover;
import io.csi4j.driver.replication.ReplicationRules.HandingOver;
import io.csi4j.driver.replication.ReplicationRules.Unreachable;
import io.csi4j.driver.replication.ReplicationRules.View;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review 2026-11-27 s10, F2: after a planned handoff A -> B the old primary A kept naming B as its successor for as long
 * as the epoch lasted, so when B was then lost every failover looked like a handoff still running: ControllerPublish on
 * A, the CO's force-detach from B and CSI-Addons Promote(force) all waited for B for ever. A forgets the successor once
 * B cut it an ordinary round's point (only a primary does: the handoff is done), and a handoff whose successor is the
 * silent node is failed over from like a silent primary. And since the name no longer stops a second demotion, only a
 * primary steps down (a fenced copy demoted on a stale view would have been a handoff's source).
 */
class HandedOverTest {
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of("node-a", "node-b"));

    @TempDir
    Path dir;

    @Test
    void aRoundFromTheSuccessorEndsTheHandoffDurably() {
        var a = new ReplicaStates(dir);
        a.create(ID, new ReplicaState(1, Role.PRIMARY, "pt-0"));
        assertEquals(new ReplicaState(2, Role.SECONDARY, "pt-0", "node-b"), a.demote(ID, 2, "node-b"));
        // a point from another node (never sent: rounds pull from the top primary) leaves the handoff as it is
        assertEquals(new ReplicaState(2, Role.SECONDARY, "pt-1", "node-b"), a.holdingFrom(ID, "pt-1", "node-c"));
        assertEquals(new ReplicaState(2, Role.SECONDARY, "pt-2"), a.holdingFrom(ID, "pt-2", "node-b"));
        assertEquals(Optional.of(new ReplicaState(2, Role.SECONDARY, "pt-2")), new ReplicaStates(dir).get(ID), "durable");
        // no longer a primary: never demoted again, at this epoch or above, whoever it would name
        refused(() -> a.demote(ID, 2, "node-c"));
        refused(() -> a.demote(ID, 3, "node-c"));
        refused(() -> a.demote(ID, 2, "node-b"));
    }

    @Test
    void onlyAPrimaryStepsDown() {
        var fenced = new ReplicaStates(dir.resolve("fenced"));
        fenced.create(ID, new ReplicaState(1, Role.PRIMARY, "pt-0"));
        fenced.learnEpoch(ID, 2);
        refused(() -> fenced.demote(ID, 2, "node-b"));          // its image took writes no primary has
        refused(() -> fenced.demote(ID, 3, "node-b"));
        var secondary = new ReplicaStates(dir.resolve("secondary"));
        secondary.create(ID, new ReplicaState(1, Role.SECONDARY, "pt-0"));
        refused(() -> secondary.demote(ID, 2, "node-b"));
        var primary = new ReplicaStates(dir.resolve("primary"));
        primary.create(ID, new ReplicaState(1, Role.PRIMARY, ""));
        refused(() -> primary.demote(ID, 1, "node-b"));         // not above its own epoch
        assertEquals(Role.SECONDARY, primary.demote(ID, 2, "node-b").role());
    }

    /** The agent's round: a successor that proves the volume unchanged (the keep path) ends the handoff too. */
    @Test
    void aKeptRoundFromTheSuccessorEndsTheHandoff() {
        var a = new ReplicaStates(dir);
        a.create(ID, new ReplicaState(1, Role.PRIMARY, "pt-0"));
        a.demote(ID, 2, "node-b");
        var rounds = new Rounds(a, null, null, null, new MemoryPool(1L << 30), "node-a");
        var fromB = primaryOn("node-b", held -> held);         // unchanged since the point A holds
        rounds.pull(ID, fromB, 0);
        assertEquals(new ReplicaState(2, Role.SECONDARY, "pt-0"), a.get(ID).orElseThrow());
    }

    /**
     * Review s10, F3's second race: a controller that does not hear the old primary fails over to X at E+1 while one that
     * does demotes the old primary naming X and asks X for the handoff's final pull at E+1. X is primary at E+1 already,
     * but by a failover: the pull must not answer "a retried handoff" (the final point, with the writes the old primary
     * took after X's last round, was never pulled); a primary the handoff itself made does.
     */
    @Test
    void aFinalPullFindingAFailedOverPrimaryIsRefusedNotTakenForARetry() {
        var x = new ReplicaStates(dir);
        x.create(ID, new ReplicaState(1, Role.SECONDARY, "pt-1"));
        x.failover(ID, 2, "failed over at T from point pt-1, replacing node 'node-a'");
        var rounds = new Rounds(x, null, null, null, new MemoryPool(1L << 30), "node-b");
        var fromA = primaryOn("node-a", held -> {
            throw new AssertionError("a refused pull asks the old primary for nothing");
        });
        var e = assertThrows(DomainException.class, () -> rounds.pull(ID, fromA, 2));
        assertEquals(DomainException.Kind.PRECONDITION, e.kind(), e.getMessage());
        var handedOver = new ReplicaStates(dir.resolve("handed"));
        handedOver.create(ID, new ReplicaState(2, Role.PRIMARY, "pt-2"));          // what a handoff's promotion leaves
        var retried = new Rounds(handedOver, null, null, null, new MemoryPool(1L << 30), "node-b").pull(ID, fromA, 2);
        assertEquals(new ReplicaState(2, Role.PRIMARY, "pt-2"), handedOver.get(ID).orElseThrow(), retried.toString());
    }

    /** CSI-Addons Promote: a handoff towards a silent successor is no longer waited for with force. */
    @Test
    void promoteWithForceFailsOverFromASilentSuccessor() {
        var aHandedOver = new View("node-a", true, Optional.of(new ReplicaState(2, Role.SECONDARY, "pt-2", "node-b")), Optional.empty());
        assertEquals(new Failover("node-a"), ReplicationRules.promote("v", List.of(aHandedOver, View.silent("node-b")), List.of(), true));
        assertEquals(Unreachable.class, ReplicationRules.promote("v", List.of(aHandedOver, View.silent("node-b")), List.of(), false).getClass());
        // the successor answering (its final pull not done): the handoff finishes towards it, force or not
        var bBehind = new View("node-b", true, Optional.of(new ReplicaState(1, Role.SECONDARY, "pt-1")), Optional.empty());
        assertEquals(new HandingOver("node-a", "node-b", 2), ReplicationRules.promote("v", List.of(aHandedOver, bBehind), List.of(), true));
        // the successor's node forgotten (left out of the views): failed over from with force as from a silent one
        assertEquals(new Failover("node-a"), ReplicationRules.promote("v", List.of(aHandedOver), List.of("node-b"), true));
    }

    /**
     * A handoff's final pull that outlived the controller's patience (the node silent for the delay meanwhile, so the
     * volume may have failed over away from this handoff) does not promote: a promotion confirms itself by the act.
     */
    @Test
    void aHandoffsPullDuringWhichTheControllerWasLostDoesNotPromote() {
        var clock = new java.util.concurrent.atomic.AtomicLong();
        var confirmations = new PrimaryConfirmations(clock::get);
        var x = new ReplicaStates(dir.resolve("x"), confirmations);
        x.create(ID, new ReplicaState(1, Role.SECONDARY, "pt-1"));
        long before = confirmations.gaps();
        clock.addAndGet(java.time.Duration.ofSeconds(130).toNanos());      // the default delay is 2 minutes
        confirmations.heard();                                              // the partition heals before the pull ends
        var e = assertThrows(DomainException.class, () -> x.promoteAfterPull(ID, 2, before));
        assertEquals(DomainException.Kind.UNAVAILABLE, e.kind(), e.getMessage());
        assertEquals(new ReplicaState(1, Role.SECONDARY, "pt-1"), x.get(ID).orElseThrow(), "not promoted, its point kept");
        // heartbeats all along (one a second): promoted, and confirmed by the act
        long again = confirmations.gaps();
        for (int i = 0; i < 60; i++) {
            clock.addAndGet(java.time.Duration.ofSeconds(1).toNanos());
            confirmations.heard();
        }
        assertEquals(new ReplicaState(2, Role.PRIMARY, "pt-1"), x.promoteAfterPull(ID, 2, again));
        x.checkWritable(ID.toString());
    }

    /** A primary on {@code node} whose cut answers {@code cut} of the point the holder holds; it sends no bytes. */
    private static Rounds.Primary primaryOn(String node, java.util.function.UnaryOperator<String> cut) {
        return new Rounds.Primary() {
            @Override
            public String cutPoint(String volumeId, String holder, String held, boolean mayKeepHeld) {
                return cut.apply(held);
            }

            @Override
            public SourceNode source() {
                return new SourceNode() {
                    @Override public String nodeId() { return node; }
                    @Override public Transfer read(io.csi4j.driver.mobility.SourceQuery query) { throw new UnsupportedOperationException(); }
                };
            }
        };
    }

    private static void refused(Runnable call) {
        var e = assertThrows(DomainException.class, call::run);
        assertEquals(DomainException.Kind.PRECONDITION, e.kind(), e.getMessage());
    }
}
