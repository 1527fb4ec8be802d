package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The rule that tells a silent agent from a slow one ({@link LastAnswer}), on a fake clock. */
class LastAnswerTest {
    private static final Duration BOUND = Duration.ofSeconds(5);

    /** A call started at {@code start} s; the agent answers (anything: heartbeats) at {@code answers} s; asked at {@code now} s. */
    record Case(String what, long start, List<Long> answers, long now, boolean cut) {}

    @Test
    void silentAgentsAreCutSlowOnesAreNot() {
        List<Case> cases = List.of(
                new Case("a long copy whose agent answers every heartbeat", 0, seconds(1, 60), 60, false),
                new Case("a big listing, heartbeats answered up to 4 s ago", 0, seconds(1, 56), 60, false),
                new Case("answers stopped 6 s ago, the call outstanding all along", 0, seconds(1, 54), 60, true),
                new Case("exactly the bound: not yet", 0, seconds(1, 55), 60, false),
                new Case("stopped just after the call began", 10, List.of(10L), 16, true),
                new Case("silent for 100 s before the call: it gets the whole bound from its start", 100, List.of(), 104, false),
                new Case("silent for 100 s before the call, 6 s into it", 100, List.of(), 106, true),
                new Case("never answered since it was dialled (at 0)", 2, List.of(), 6, false),
                new Case("never answered, 6 s into the call", 2, List.of(), 8, true),
                new Case("continued (SIGCONT) and answering again", 30, List.of(33L, 34L, 35L), 38, false));
        for (Case c : cases) {
            var clock = new AtomicLong(0);
            var last = new LastAnswer(clock::get);  // dialled at 0
            for (long at : c.answers()) {
                clock.set(at * 1_000_000_000L);
                last.answered();
            }
            clock.set(c.now() * 1_000_000_000L);
            assertEquals(c.cut(), last.cuts(c.start() * 1_000_000_000L, BOUND), c.what());
        }
    }

    @Test
    void silentForCountsFromTheLastAnswerOrTheFirstDial() {
        var clock = new AtomicLong(7_000_000_000L);
        var last = new LastAnswer(clock::get);
        clock.addAndGet(3_000_000_000L);
        assertEquals(Duration.ofSeconds(3), last.silentFor(), "never answered: since it was first dialled");
        last.answered();
        clock.addAndGet(42_000_000_000L);
        assertEquals(Duration.ofSeconds(42), last.silentFor());
        last.answered();
        assertEquals(Duration.ZERO, last.silentFor());
    }

    private static List<Long> seconds(long from, long to) {
        return java.util.stream.LongStream.rangeClosed(from, to).boxed().toList();
    }
}
