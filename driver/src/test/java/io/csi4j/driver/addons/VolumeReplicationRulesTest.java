package io.csi4j.driver.addons;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.replication.ReplicaState;
import io.csi4j.driver.replication.ReplicaState.Role;
import io.csi4j.driver.replication.ReplicationRules;
import io.csi4j.driver.replication.ReplicationRules.AlreadyPrimary;
import io.csi4j.driver.replication.ReplicationRules.Decision;
import io.csi4j.driver.replication.ReplicationRules.Exists;
import io.csi4j.driver.replication.ReplicationRules.Failover;
import io.csi4j.driver.replication.ReplicationRules.HandingOver;
import io.csi4j.driver.replication.ReplicationRules.Info;
import io.csi4j.driver.replication.ReplicationRules.Resync;
import io.csi4j.driver.replication.ReplicationRules.StepDown;
import io.csi4j.driver.replication.ReplicationRules.Unreachable;
import io.csi4j.driver.replication.ReplicationRules.View;
import io.csi4j.driver.replication.RoundLog;
import io.csi4j.proto.addons.replication.ReplicationSource;
import io.csi4j.sdk.CsiException;
import io.grpc.Status.Code;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * CSI-Addons VolumeReplication's rules (docs/replication.md, "CSI-Addons VolumeReplication"): each call's decision from
 * what every replica's node says, and the code the CSI-Addons edge answers for each refusal (AddonsStatus).
 */
class VolumeReplicationRulesTest {
    private static final String V = "vol-x";
    private static final Instant T0 = Instant.parse("2026-11-27T01:00:00Z");

    private static View copy(String node, long epoch, Role role, String point, String successor, Instant cut) {
        var round = Optional.ofNullable(cut).map(c -> new RoundLog.Round(c, c.plusSeconds(2), 4096, Duration.ofSeconds(2)));
        return new View(node, true, Optional.of(new ReplicaState(epoch, role, point, successor)), round);
    }

    private static View primary(String node, long epoch) {
        return copy(node, epoch, Role.PRIMARY, "", "", null);
    }

    private static View secondary(String node, long epoch, String point, Instant cut) {
        return copy(node, epoch, Role.SECONDARY, point, "", cut);
    }

    private static View none(String node) {
        return new View(node, true, Optional.empty(), Optional.empty());
    }

    /** A decision, or the code AddonsStatus gives the refusal, or UNAVAILABLE for an Unreachable decision. */
    private static Object outcome(Supplier<Decision> call) {
        try {
            Decision d = call.get();
            return d instanceof Unreachable ? Code.UNAVAILABLE : d;
        } catch (DomainException e) {
            return ((CsiException) AddonsStatus.toStatus(e)).code();
        }
    }

    private record Case(String name, Supplier<Decision> call, Object expected) {}

    @Test
    void eachCallDecidesFromTheNodesAnswers() {
        var a1 = primary("a", 1);
        var b1 = secondary("b", 1, "p-b-1", T0);
        var c1 = secondary("c", 1, "p-c-3", T0.plusSeconds(30));     // cut later: the freshest
        var b0 = secondary("b", 1, "", null);                        // no point yet
        var aDemoted = copy("a", 2, Role.SECONDARY, "", "c", null);  // handed over to c at epoch 2
        var c1at2 = secondary("c", 1, "p-c-3", T0.plusSeconds(30));
        var aFenced = copy("a", 2, Role.FENCED, "", "", null);
        var cases = List.of(
                new Case("promote, a live primary: nothing to do", () -> ReplicationRules.promote(V, List.of(a1, b1, c1), List.of(), false), new AlreadyPrimary("a")),
                new Case("promote force, a live primary: never replaced by an older copy", () -> ReplicationRules.promote(V, List.of(a1, b1, View.silent("c")), List.of(), true), new AlreadyPrimary("a")),
                new Case("promote after a demote: the handoff finishes", () -> ReplicationRules.promote(V, List.of(aDemoted, b1, c1at2), List.of(), false), new HandingOver("a", "c", 2)),
                new Case("promote, primary silent, no force: UNAVAILABLE", () -> ReplicationRules.promote(V, List.of(View.silent("a"), b1, c1), List.of(), false), Code.UNAVAILABLE),
                new Case("promote force, primary silent: the freshest secondary", () -> ReplicationRules.promote(V, List.of(View.silent("a"), b1, c1), List.of(), true), new Failover("c")),
                new Case("promote force, no answering copy holds a point", () -> ReplicationRules.promote(V, List.of(View.silent("a"), b0), List.of(), true), Code.FAILED_PRECONDITION),
                new Case("promote, every node answers, none primary (fenced)", () -> ReplicationRules.promote(V, List.of(aFenced, secondary("b", 2, "p", T0)), List.of(), false), Code.FAILED_PRECONDITION),
                new Case("promote force, primary's node forgotten: the freshest secondary", () -> ReplicationRules.promote(V, List.of(b1, c1), List.of("a"), true), new Failover("c")),
                new Case("promote, primary's node forgotten, no force: FAILED_PRECONDITION naming force", () -> ReplicationRules.promote(V, List.of(b1, c1), List.of("a"), false), Code.FAILED_PRECONDITION),
                new Case("promote force, primary's node forgotten and another silent: the freshest answering one (failoverTo waits out the silent one's delay)", () -> ReplicationRules.promote(V, List.of(b1, View.silent("c")), List.of("a"), true), new Failover("b")),
                new Case("promote force, forgotten primary node, no copy holds a point", () -> ReplicationRules.promote(V, List.of(b0), List.of("a"), true), Code.FAILED_PRECONDITION),
                new Case("promote, no node holds it", () -> ReplicationRules.promote(V, List.of(none("a"), none("b")), List.of(), false), Code.NOT_FOUND),
                new Case("demote: towards the freshest secondary at epoch + 1", () -> ReplicationRules.demote(V, List.of(a1, b1, c1)), new StepDown("a", "c", 2)),
                new Case("demote: a secondary without a point still takes it (full copy)", () -> ReplicationRules.demote(V, List.of(a1, b0)), new StepDown("a", "b", 2)),
                new Case("demote again: idempotent", () -> ReplicationRules.demote(V, List.of(aDemoted, b1, c1at2)), new HandingOver("a", "c", 2)),
                new Case("demote, the only secondary silent", () -> ReplicationRules.demote(V, List.of(a1, View.silent("b"))), Code.UNAVAILABLE),
                new Case("demote, primary silent", () -> ReplicationRules.demote(V, List.of(View.silent("a"), b1)), Code.UNAVAILABLE),
                new Case("resync: every secondary of the primary", () -> ReplicationRules.resync(V, List.of(a1, b1, c1)), new Resync("a", List.of("b", "c"), List.of(), List.of())),
                new Case("resync: a silent secondary is named", () -> ReplicationRules.resync(V, List.of(a1, b1, View.silent("c"))), new Resync("a", List.of("b"), List.of(), List.of("c"))),
                new Case("resync after a handoff: the old primary follows the new one", () -> ReplicationRules.resync(V,
                        List.of(aDemoted, copy("c", 2, Role.PRIMARY, "p-c-3", "", null))), new Resync("c", List.of("a"), List.of(), List.of())),
                new Case("resync while demoted: FAILED_PRECONDITION", () -> ReplicationRules.resync(V, List.of(aDemoted, b1, c1at2)), Code.FAILED_PRECONDITION),
                new Case("resync, a fenced old copy does not follow", () -> ReplicationRules.resync(V, List.of(aFenced, copy("b", 2, Role.PRIMARY, "p", "", null))), new Resync("b", List.of(), List.of("a"), List.of())),
                new Case("info: the freshest secondary's last round", () -> ReplicationRules.info(V, List.of(a1, b1, c1)), new Info(c1.lastRound().get())),
                new Case("info: no round yet", () -> ReplicationRules.info(V, List.of(a1, b0)), Code.UNAVAILABLE),
                new Case("info: not found", () -> ReplicationRules.info(V, List.of(none("a"), none("b"))), Code.NOT_FOUND),
                new Case("exists: some node holds it", () -> ReplicationRules.exists(V, List.of(View.silent("a"), b1)), new Exists()),
                new Case("exists: none answering holds it", () -> ReplicationRules.exists(V, List.of(View.silent("a"), none("b"))), Code.UNAVAILABLE));
        for (Case c : cases) assertEquals(c.expected(), outcome(c.call()), c.name());
        assertEquals(true, new Resync("a", List.of("b"), List.of(), List.of()).complete());
        assertEquals(false, new Resync("b", List.of(), List.of("a"), List.of()).complete());
    }

    @Test
    void enableAndDisableSayWhatAVolumeIs() {
        ReplicationRules.enable(V, true);                 // replicated from creation: OK, every time
        ReplicationRules.disable(V, false);               // an ordinary volume replicates nothing: OK
        assertEquals(Code.FAILED_PRECONDITION, code(() -> ReplicationRules.enable(V, false)));
        assertEquals(Code.FAILED_PRECONDITION, code(() -> ReplicationRules.disable(V, true)));
    }

    @Test
    void theVolumeIdComesFromTheSourceOrTheDeprecatedField() {
        var volume = ReplicationSource.newBuilder().setVolume(ReplicationSource.VolumeSource.newBuilder().setVolumeId("v1")).build();
        assertEquals("v1", VolumeReplicationService.volumeId("", true, volume));
        assertEquals("v1", VolumeReplicationService.volumeId("v1", true, volume));
        assertEquals("v2", VolumeReplicationService.volumeId("v2", false, ReplicationSource.getDefaultInstance()));
        var group = ReplicationSource.newBuilder().setVolumegroup(ReplicationSource.VolumeGroupSource.newBuilder().setVolumeGroupId("g")).build();
        var snapshot = ReplicationSource.newBuilder().setVolumesnapshot(ReplicationSource.VolumeSnapshotSource.newBuilder().setVolumeSnapshotId("s")).build();
        for (Runnable bad : List.<Runnable>of(
                () -> VolumeReplicationService.volumeId("", false, ReplicationSource.getDefaultInstance()),
                () -> VolumeReplicationService.volumeId("", true, ReplicationSource.getDefaultInstance()),
                () -> VolumeReplicationService.volumeId("v2", true, volume),
                () -> VolumeReplicationService.volumeId("", true, group),
                () -> VolumeReplicationService.volumeId("", true, snapshot))) {
            assertEquals(Code.INVALID_ARGUMENT, code(bad));
        }
    }

    private static Code code(Runnable call) {
        var e = assertThrows(DomainException.class, call::run);
        return ((CsiException) AddonsStatus.toStatus(e)).code();
    }
}
