package io.csi4j.driver.replication;

import java.time.Duration;
import java.util.Optional;

/**
 * When a secondary's next round is due, so that the point it holds is never older than the volume's interval (the
 * interval is what a node loss may cost, the number a StorageClass promises). The age of the point held peaks just
 * before the next round completes: the wait until that round starts, plus the scheduler's tick (it asks each agent
 * once a second), plus the round itself. So a round is due once {@code interval - (last round's duration + tick)} has
 * passed since the last round started; never sooner than half the interval, so that a round as long as the interval
 * (a slow link, a big delta) does not turn into back-to-back rounds that each freeze the primary. Before any round
 * here (a new volume, an agent restart) the whole interval is waited, as before. A round that failed is tried again
 * sooner, {@link #FIRST_RETRY} after its start and doubling with each failure in a row, never later than the round
 * would be due anyway: a copy whose first round after a failover failed is not left unprotected for a whole interval
 * (a day for a {@code 24h} class), and a primary that stays away is asked at most once per doubling wait.
 */
public final class RoundDeadline {
    /** The controller's scheduler asks every agent this often (cluster/ReplicationScheduler.TICK). */
    public static final Duration TICK = Duration.ofSeconds(1);

    /** A failed round is tried again this long after its start; each failure in a row doubles it. */
    public static final Duration FIRST_RETRY = Duration.ofSeconds(1);

    private RoundDeadline() {}

    /**
     * How long after the last round's start the next one is due when the last {@code failedInARow} rounds failed (0:
     * the last one did not, or none was tried): {@link #waitAfterStart(Duration, Optional)}, or, after failures,
     * {@link #FIRST_RETRY} doubled for each one after the first, whichever is sooner.
     */
    public static Duration waitAfterStart(Duration interval, Optional<Duration> lastRoundTook, int failedInARow) {
        Duration due = waitAfterStart(interval, lastRoundTook);
        if (failedInARow <= 0) return due;
        Duration retry = FIRST_RETRY.multipliedBy(1L << Math.min(failedInARow - 1, 30));
        return retry.compareTo(due) < 0 ? retry : due;
    }

    /** How long after the last round's start the next one is due. */
    public static Duration waitAfterStart(Duration interval, Optional<Duration> lastRoundTook) {
        if (lastRoundTook.isEmpty()) return interval;
        Duration lead = lastRoundTook.get().plus(TICK);
        Duration wait = interval.minus(lead);
        Duration floor = interval.dividedBy(2);
        return wait.compareTo(floor) < 0 ? floor : wait;
    }
}
