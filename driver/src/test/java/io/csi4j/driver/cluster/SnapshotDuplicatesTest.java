package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.cluster.SnapshotDuplicates.Deletion;
import io.csi4j.driver.cluster.SnapshotDuplicates.Held;
import io.csi4j.driver.id.ReplicatedVolumeId;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which of several snapshots of one name answers CreateSnapshot, and which the sweep deletes (docs/replication.md, "Snapshots"). */
class SnapshotDuplicatesTest {
    private static final String SOURCE = ReplicatedVolumeId.generate(List.of("node-a", "node-b", "node-c")).toString();
    private static final String TWO = ReplicatedVolumeId.generate(List.of("node-a", "node-b")).toString();
    private static final String OTHER = ReplicatedVolumeId.generate(List.of("node-a", "node-c")).toString();
    private static final Instant T = Instant.ofEpochSecond(1_800_000_000L);
    private static final Set<String> ALL = Set.of("node-a", "node-b", "node-c");

    private static Held on(String node, String id, String source, long second) {
        return new Held(node, "retried", id, source, T.plusSeconds(second));
    }

    private static final Held A_OLD = on("node-a", "snap-a", SOURCE, 0);
    private static final Held B_NEW = on("node-b", "snap-b", SOURCE, 30);
    private static final Held C_NEWEST = on("node-c", "snap-c", SOURCE, 60);
    /** The same instant as {@link #B_NEW}: the greater id is the newer. */
    private static final Held C_TIE = on("node-c", "snap-c", SOURCE, 30);
    private static final Held C_ELSEWHERE = on("node-c", "snap-x", OTHER, 90);

    static Stream<Arguments> answers() {
        return Stream.of(
                Arguments.of("nobody holds the name: the primary takes it", List.of(), Optional.empty()),
                Arguments.of("one holder", List.of(A_OLD), Optional.of(A_OLD)),
                Arguments.of("two: the newest, whichever answered first", List.of(A_OLD, B_NEW), Optional.of(B_NEW)),
                Arguments.of("two, the other order", List.of(B_NEW, A_OLD), Optional.of(B_NEW)),
                Arguments.of("three", List.of(B_NEW, C_NEWEST, A_OLD), Optional.of(C_NEWEST)),
                Arguments.of("a tie on time: the greater id", List.of(C_TIE, B_NEW), Optional.of(C_TIE)),
                Arguments.of("one of another source: it answers ALREADY_EXISTS", List.of(A_OLD, C_ELSEWHERE, B_NEW),
                        Optional.of(C_ELSEWHERE)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("answers")
    void whichAnswers(String why, List<Held> holders, Optional<Held> expected) {
        assertEquals(expected, SnapshotDuplicates.answer(SOURCE, holders));
    }

    static Stream<Arguments> sweeps() {
        Held bOfTwo = on("node-b", "snap-b2", TWO, 30);
        Held aOfTwo = on("node-a", "snap-a2", TWO, 0);
        Held other = new Held("node-b", "another-name", "snap-o", SOURCE, T);
        return Stream.of(
                Arguments.of("every node answered: the older goes", ALL, List.of(A_OLD, B_NEW),
                        List.of(new Deletion(A_OLD, B_NEW))),
                Arguments.of("listed in the other order: the same", ALL, List.of(B_NEW, A_OLD),
                        List.of(new Deletion(A_OLD, B_NEW))),
                Arguments.of("three: both older ones go, oldest first", ALL, List.of(C_NEWEST, A_OLD, B_NEW),
                        List.of(new Deletion(A_OLD, C_NEWEST), new Deletion(B_NEW, C_NEWEST))),
                Arguments.of("a tie on time: the smaller id goes", ALL, List.of(C_TIE, B_NEW),
                        List.of(new Deletion(B_NEW, C_TIE))),
                Arguments.of("a node of the source silent (it may hold a newer one): nothing",
                        Set.of("node-a", "node-b"), List.of(A_OLD, B_NEW), List.of()),
                Arguments.of("the silent node is not the source's: its volumes' duplicates still go",
                        Set.of("node-a", "node-b"), List.of(aOfTwo, bOfTwo), List.of(new Deletion(aOfTwo, bOfTwo))),
                Arguments.of("different sources under one name: nothing", ALL, List.of(A_OLD, C_ELSEWHERE), List.of()),
                Arguments.of("only one of the name: nothing", ALL, List.of(A_OLD, other), List.of()),
                Arguments.of("not a replicated source: nothing", ALL,
                        List.of(on("node-a", "p1", "vol-plain-a", 0), on("node-b", "p2", "vol-plain-a", 30)), List.of()),
                Arguments.of("a holder on a node the source does not name: nothing", ALL,
                        List.of(on("node-a", "snap-a2", TWO, 0), on("node-c", "snap-c2", TWO, 30)), List.of()),
                Arguments.of("nothing listed", ALL, List.of(), List.of()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sweeps")
    void whichTheSweepDeletes(String why, Set<String> answered, List<Held> listed, List<Deletion> expected) {
        assertEquals(expected, SnapshotDuplicates.older(answered, listed));
    }
}
