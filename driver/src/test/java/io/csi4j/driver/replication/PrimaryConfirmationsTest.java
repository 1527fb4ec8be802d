package io.csi4j.driver.replication;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.replication.ReplicaState.Role;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A primary that may have been away refuses a new writable use until the controller confirms it. */
class PrimaryConfirmationsTest {
    private static final ReplicatedVolumeId ID = ReplicatedVolumeId.generate(List.of("node-a", "node-b"));
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final PrimaryConfirmations confirmations = new PrimaryConfirmations(now::get);

    @TempDir Path dir;

    private void advance(Duration d) {
        now.addAndGet(d.toNanos());
    }

    @Test
    void nothingIsConfirmedAtStartAndAConfirmationHoldsOnlyItsEpoch() {
        assertFalse(confirmations.confirmed(ID, 1), "an agent's start: unconfirmed");
        var e = assertThrows(DomainException.class, () -> confirmations.checkConfirmed(ID, 1));
        assertEquals(DomainException.Kind.UNAVAILABLE, e.kind());
        assertTrue(e.getMessage().contains("cannot rule out a failover while this node was away"), e.getMessage());
        confirmations.confirm(ID, 1);
        assertTrue(confirmations.confirmed(ID, 1));
        confirmations.checkConfirmed(ID, 1);
        assertFalse(confirmations.confirmed(ID, 2), "another epoch is not what was confirmed");
    }

    @Test
    void aSilenceOfTheFailoverDelayUnconfirmsAndShorterOnesDoNot() {
        confirmations.failoverAfter(Duration.ofSeconds(8));
        confirmations.confirm(ID, 1);
        for (int i = 0; i < 20; i++) {                       // heartbeats every second for 20 s: stays confirmed
            advance(Duration.ofSeconds(1));
            confirmations.heard();
        }
        advance(Duration.ofMillis(5_300));
        assertTrue(confirmations.confirmed(ID, 1), "5.3 s of silence, 8 s delay less a third (the agent may hear after the last answer)");
        advance(Duration.ofMillis(100));
        assertFalse(confirmations.confirmed(ID, 1), "seen at a stage, before any heartbeat: the gap counts at once");
        confirmations.heard();
        assertFalse(confirmations.confirmed(ID, 1), "the next heartbeat does not confirm it again");
        confirmations.confirm(ID, 1);
        assertTrue(confirmations.confirmed(ID, 1));

        advance(Duration.ofSeconds(30));                     // a long SIGSTOP: the first heartbeat after it sees the gap
        confirmations.heard();
        assertFalse(confirmations.confirmed(ID, 1));
    }

    @Test
    void theMarginIsThreeSecondsOrAThirdOfAShortDelay() {
        confirmations.failoverAfter(Duration.ofMinutes(2));
        assertEquals(Duration.ofSeconds(117), confirmations.unconfirmAfter());
        confirmations.failoverAfter(Duration.ofSeconds(12));
        assertEquals(Duration.ofSeconds(9), confirmations.unconfirmAfter());
        confirmations.failoverAfter(Duration.ofSeconds(9));
        assertEquals(Duration.ofSeconds(6), confirmations.unconfirmAfter());
        confirmations.failoverAfter(Duration.ofSeconds(6));
        assertEquals(Duration.ofSeconds(4), confirmations.unconfirmAfter());
    }

    @Test
    void theDelayIsTheControllersOnceItSaidItAndTheDefaultBefore() {
        confirmations.confirm(ID, 1);
        advance(Duration.ofSeconds(100));
        confirmations.heard();
        assertTrue(confirmations.confirmed(ID, 1), "100 s below the default " + PrimaryConfirmations.DEFAULT_FAILOVER_AFTER);
        advance(PrimaryConfirmations.DEFAULT_FAILOVER_AFTER);
        assertFalse(confirmations.confirmed(ID, 1));
        confirmations.failoverAfter(Duration.ZERO);          // not said: kept
        confirmations.failoverAfter(Duration.ofSeconds(5));
        confirmations.heard();
        confirmations.confirm(ID, 1);
        advance(Duration.ofSeconds(5));
        assertFalse(confirmations.confirmed(ID, 1));
    }

    @Test
    void writableNeedsAConfirmedPrimaryAndTheControllersOwnActsConfirm() {
        var a = new ReplicaStates(dir);
        a.create(ID, new ReplicaState(1, Role.PRIMARY, "rpt-1"));
        a.checkWritable(ID.toString());                      // created by the controller just now
        var restarted = new ReplicaStates(dir);              // the agent restarted: same state, nothing confirmed
        var e = assertThrows(DomainException.class, () -> restarted.checkWritable(ID.toString()));
        assertEquals(DomainException.Kind.UNAVAILABLE, e.kind());
        restarted.confirmations().confirm(ID, 1);
        restarted.checkWritable(ID.toString());

        var b = new ReplicaStates(dir.resolve("b"));
        b.create(ID, new ReplicaState(1, Role.SECONDARY, "rpt-1"));
        var again = new ReplicaStates(dir.resolve("b"));
        again.failover(ID, 2, "failed over");
        again.checkWritable(ID.toString());                  // a failover is the controller's decision: confirmed
        restarted.learnEpoch(ID, 2);
        assertEquals(DomainException.Kind.PRECONDITION,
                assertThrows(DomainException.class, () -> restarted.checkWritable(ID.toString())).kind(), "fenced: the old rule first");
    }
}
