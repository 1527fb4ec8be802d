package io.csi4j.driver.replication;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.id.ReplicatedVolumeId;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.logging.Logger;

/**
 * Which primaries of this node the controller has confirmed since this node may last have been away (in memory;
 * docs/replication.md, "Confirmation"). A primary may have been superseded by a failover while its node was away, and
 * with two replicas nothing that answers may know the higher epoch; so a PRIMARY copy is <b>unconfirmed</b> when the
 * agent starts and whenever it has heard nothing from the controller (its heartbeat Probe, its listing) for the
 * failover delay less {@link #HEARD_AFTER_LAST_ANSWER} ({@link #unconfirmAfter}), and an unconfirmed primary refuses
 * a new writable stage or publish (UNAVAILABLE) until the controller confirms it (NodeAgent.ConfirmPrimary: every
 * node of the volume answered in one tick and this copy is primary at the highest epoch). A copy made primary here by the controller (creation, promotion, failover) is
 * confirmed by that act. The monotonic clock keeps running while the process is stopped (SIGSTOP), so a resumed agent
 * sees the gap at its first contact or stage.
 */
public final class PrimaryConfirmations {
    private static final Logger LOG = Logger.getLogger(PrimaryConfirmations.class.getName());
    /** The controller's default --failover-after (cluster/Replicas.FAILOVER_AFTER), until it says its own. */
    public static final Duration DEFAULT_FAILOVER_AFTER = Duration.ofMinutes(2);
    /**
     * How much later than the controller's last answer from this agent the agent may still hear the controller: the
     * controller counts a failover's silence from its last answer, but the request after it (the next heartbeat, within
     * the 1 s heartbeat interval, late by the controller's own scheduling) can arrive while its answer is lost (a
     * one-way partition, or a cut between the two). After that the connection stalls: TCP sends nothing new once a
     * segment went unacknowledged for its first retransmission timeout (200 ms and up), and no new connection completes
     * without the agent's SYN-ACK (ClusterOneWayPartitionTest measures it). So the agent unconfirms this much earlier
     * than the delay, and is unconfirmed before any failover can supersede it (docs/replication.md, "Confirmation").
     */
    public static final Duration HEARD_AFTER_LAST_ANSWER = Duration.ofSeconds(3);

    private final LongSupplier nanoTime;
    /** Volume id to the epoch confirmed at. */
    private final Map<String, Long> confirmed = new HashMap<>();
    private long lastHeard;
    /** Silences of the unconfirming length noticed so far ({@link #gaps}). */
    private long gaps;
    private Duration failoverAfter = DEFAULT_FAILOVER_AFTER;

    public PrimaryConfirmations() {
        this(System::nanoTime);
    }

    /** @param nanoTime a monotonic clock (tests drive it) */
    public PrimaryConfirmations(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
        this.lastHeard = nanoTime.getAsLong();
    }

    /** The controller's failover delay, as its latest listing said; ignored unless positive. */
    public synchronized void failoverAfter(Duration delay) {
        if (delay.isPositive()) failoverAfter = delay;
    }

    /** The controller reached this agent now: a gap of the failover delay since the last contact unconfirms all. */
    public synchronized void heard() {
        noticeGap();
        lastHeard = nanoTime.getAsLong();
    }

    /** The controller made or confirmed this copy PRIMARY at {@code epoch} (the caller checked the state). */
    public synchronized void confirm(ReplicatedVolumeId id, long epoch) {
        heard();                                  // the controller's call is a contact too: others' gap first
        confirmed.put(id.toString(), epoch);
    }

    /** Whether this node's PRIMARY copy at {@code epoch} is confirmed (a gap seen now unconfirms it first). */
    public synchronized boolean confirmed(ReplicatedVolumeId id, long epoch) {
        noticeGap();
        Long at = confirmed.get(id.toString());
        return at != null && at == epoch;
    }

    /** UNAVAILABLE unless this PRIMARY copy at {@code epoch} is confirmed: what a new writable stage or publish asks. */
    public void checkConfirmed(ReplicatedVolumeId id, long epoch) {
        if (!confirmed(id, epoch)) {
            throw DomainException.unavailable("replica of " + id + " on this node is primary at epoch " + epoch
                    + " but unconfirmed: cannot rule out a failover while this node was away; waiting until every"
                    + " replica's node answers the controller");
        }
    }

    /**
     * The silence that unconfirms: the failover delay less {@link #HEARD_AFTER_LAST_ANSWER}, or less a third of the
     * delay when that is shorter (a delay under 9 s, as the tests use: the 1 s heartbeats must not unconfirm a healthy
     * agent on a loaded machine, and a third of 6 s still exceeds the ~1 s measured).
     */
    synchronized Duration unconfirmAfter() {
        Duration margin = HEARD_AFTER_LAST_ANSWER.compareTo(failoverAfter.dividedBy(3)) < 0 ? HEARD_AFTER_LAST_ANSWER
                : failoverAfter.dividedBy(3);
        return failoverAfter.minus(margin);
    }

    /**
     * A count that changes whenever this agent notices it heard nothing from the controller for the unconfirming silence
     * (a gap seen now counts): read before and after a long step the controller asked for, a change means the controller
     * may have given up on this node meanwhile (a handoff's final pull whose promotion the controller no longer awaits,
     * while it failed the volume over elsewhere: review s10, F2).
     */
    public synchronized long gaps() {
        noticeGap();
        return gaps;
    }

    private void noticeGap() {
        long silent = nanoTime.getAsLong() - lastHeard;
        Duration after = unconfirmAfter();
        if (silent >= after.toNanos()) gaps++;
        if (silent >= after.toNanos() && !confirmed.isEmpty()) {
            LOG.warning(() -> "nothing heard from the controller for " + Duration.ofNanos(silent).toMillis() + " ms (failover after "
                    + failoverAfter.toMillis() + " ms, unconfirmed after " + after.toMillis() + " ms): every primary here is"
                    + " unconfirmed until the controller confirms it");
            confirmed.clear();
        }
    }
}
