package io.csi4j.driver.replication;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.replication.ReplicaState.Role;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What each CSI-Addons VolumeReplication call does to one volume, decided from what every replica's node says of its
 * copy (docs/replication.md, "CSI-Addons VolumeReplication"). Pure: the cluster controller asks the nodes and carries
 * the decision out. A refusal the caller must act on is a {@link DomainException}; a node that must answer first is an
 * {@link Unreachable} decision (the edge answers UNAVAILABLE, and the caller retries).
 */
public final class ReplicationRules {
    private ReplicationRules() {}

    /**
     * One replica's node: whether it answered, and its durable state and last round if it holds a copy, and when the
     * point it holds was cut, whatever made it (a handoff's final point on the old primary has no round: review s10, F6).
     */
    public record View(String node, boolean answered, Optional<ReplicaState> state, Optional<RoundLog.Round> lastRound,
            Optional<Instant> pointCutAt) {
        public View {
            Objects.requireNonNull(node, "node");
            if (!answered && (state.isPresent() || lastRound.isPresent() || pointCutAt.isPresent())) {
                throw new IllegalArgumentException("a silent node says nothing");
            }
        }

        /** As above, the point's cut known only by the last round (an agent that does not report it). */
        public View(String node, boolean answered, Optional<ReplicaState> state, Optional<RoundLog.Round> lastRound) {
            this(node, answered, state, lastRound, lastRound.map(RoundLog.Round::cutAt));
        }

        public static View silent(String node) {
            return new View(node, false, Optional.empty(), Optional.empty());
        }
    }

    /** The decision of one call. */
    public sealed interface Decision {}

    /** Nothing to do: {@code node} is primary at the highest epoch. */
    public record AlreadyPrimary(String node) implements Decision {}

    /** Demoted already: a handoff from {@code from} to {@code to} at {@code epoch} is in progress. */
    public record HandingOver(String from, String to, long epoch) implements Decision {}

    /** The primary {@code from} steps down to a secondary of {@code epoch} naming {@code to}. */
    public record StepDown(String from, String to, long epoch) implements Decision {}

    /** The primary's node is silent: {@code to}'s latest complete point becomes primary (once silent long enough). */
    public record Failover(String to) implements Decision {}

    /** A round from {@code primary} on each of {@code secondaries}; {@code others} hold no copy that follows it. */
    public record Resync(String primary, List<String> secondaries, List<String> others, List<String> silent) implements Decision {
        public boolean complete() {
            return others.isEmpty() && silent.isEmpty();
        }
    }

    /** These nodes must answer first. */
    public record Unreachable(List<String> nodes, String why) implements Decision {}

    public static void enable(String volume, boolean replicated) {
        if (!replicated) {
            throw DomainException.precondition("volume " + volume + " is not replicated: a csi4j volume's replicas are fixed when it is"
                    + " created (csi4j.io/replicas); clone it into a volume of a replicated StorageClass instead");
        }
    }

    public static void disable(String volume, boolean replicated) {
        if (replicated) {
            throw DomainException.precondition("volume " + volume + " is replicated and stays so: its replicas are fixed when it is"
                    + " created (its node affinity names them); clone it into a volume of csi4j.io/replicas 1 instead");
        }
    }

    /**
     * Never demotes a live primary for an older copy, with or without force. {@code forgotten}: the set's nodes declared
     * lost for good ({@code csi4j cluster forget-node}), left out of {@code views}; with no primary answering, one of them
     * held it, so force fails over as from a node silent for ever (review s9, F2).
     */
    public static Decision promote(String volume, List<View> views, List<String> forgotten, boolean force) {
        var set = new Set(volume, views);
        if (set.primary().isPresent()) return new AlreadyPrimary(set.primary().get().node());
        // a handoff finishes towards its successor; one whose successor is the silent node (or a forgotten one) is failed
        // over like a silent primary (it may have been promoted and taken writes, then been lost: review s10, F2)
        if (set.handoff().isPresent() && !set.silent().contains(set.handoff().get().to())
                && !forgotten.contains(set.handoff().get().to())) return set.handoff().get();
        if (!set.silent().isEmpty() || !forgotten.isEmpty()) {
            if (!force) {
                if (set.silent().isEmpty()) {
                    throw DomainException.precondition("volume " + volume + ": its primary was on forgotten node(s) " + forgotten
                            + "; PromoteVolume with force fails over to the freshest secondary");
                }
                return new Unreachable(set.silent(), "volume " + volume + ": no answering node holds its primary; PromoteVolume with"
                        + " force fails over to the freshest secondary once the silent node has been silent for --failover-after");
            }
            // the newest point among every answering secondary, whatever epoch it knows (FailoverTarget)
            return new Failover(FailoverTarget.newest(views).orElseThrow(() -> DomainException.precondition("volume " + volume
                    + ": no answering copy holds a complete point to fail over to")).node());
        }
        throw set.noPrimary();
    }

    /** Demote names the freshest answering secondary as the successor, as a drain's handoff would. */
    public static Decision demote(String volume, List<View> views) {
        var set = new Set(volume, views);
        if (set.handoff().isPresent()) return set.handoff().get();
        if (set.primary().isPresent()) {
            var to = set.freshest().or(set::anySecondary).orElse(null);
            if (to == null) {
                if (!set.silent().isEmpty()) return new Unreachable(set.silent(), "volume " + volume + ": no answering secondary to hand over to");
                throw DomainException.precondition("volume " + volume + " has no secondary at epoch " + set.top() + " to hand over to");
            }
            return new StepDown(set.primary().get().node(), to.node(), set.top() + 1);
        }
        if (!set.silent().isEmpty()) return new Unreachable(set.silent(), "volume " + volume + ": no answering node holds its primary");
        throw set.noPrimary();
    }

    public static Decision resync(String volume, List<View> views) {
        var set = new Set(volume, views);
        if (set.primary().isEmpty()) {
            if (set.handoff().isPresent()) {
                var h = set.handoff().get();
                throw DomainException.precondition("volume " + volume + " is demoted (node '" + h.from() + "' hands over to '" + h.to()
                        + "'): PromoteVolume, or publish it on '" + h.to() + "', before a resync");
            }
            if (!set.silent().isEmpty()) return new Unreachable(set.silent(), "volume " + volume + ": no answering node holds its primary");
            throw set.noPrimary();
        }
        String primary = set.primary().get().node();
        var secondaries = set.followers().stream().map(View::node).toList();
        var others = views.stream().filter(v -> v.answered() && !v.node().equals(primary) && !secondaries.contains(v.node()))
                .map(View::node).toList();
        return new Resync(primary, secondaries, others, set.silent());
    }

    /** The freshest secondary's last round: the one whose point was cut last. */
    public static Decision info(String volume, List<View> views) {
        var set = new Set(volume, views);
        var freshest = set.freshestRound().flatMap(View::lastRound);
        if (freshest.isPresent()) return new Info(freshest.get());
        List<String> waitFor = set.silent().isEmpty() ? views.stream().map(View::node).toList() : set.silent();
        return new Unreachable(waitFor, "volume " + volume + ": no secondary has completed a round since its agent started;"
                + " the next one comes within the volume's interval");
    }

    /** Some replica's node holds a copy. */
    public record Exists() implements Decision {}

    /** Exists when some node holds a copy; NOT_FOUND when every node answered without one; else Unreachable. */
    public static Decision exists(String volume, List<View> views) {
        var set = new Set(volume, views);
        if (views.stream().anyMatch(v -> v.state().isPresent())) return new Exists();
        return new Unreachable(set.silent(), "volume " + volume + ": no answering node holds a copy of it");
    }

    /** The last round GetVolumeReplicationInfo reports. */
    public record Info(RoundLog.Round round) implements Decision {}

    /** The views of one volume, and what they say together. */
    private record Set(String volume, List<View> views) {
        Set {
            if (views.stream().noneMatch(v -> v.state().isPresent()) && views.stream().allMatch(View::answered)) {
                throw DomainException.notFound("volume " + volume + " does not exist");
            }
        }

        long top() {
            return views.stream().flatMap(v -> v.state().stream()).mapToLong(ReplicaState::epoch).max().orElse(0);
        }

        List<String> silent() {
            return views.stream().filter(v -> !v.answered()).map(View::node).toList();
        }

        Optional<View> primary() {
            return views.stream().filter(v -> v.state().filter(s -> s.role() == Role.PRIMARY && s.epoch() == top()).isPresent()).findFirst();
        }

        Optional<HandingOver> handoff() {
            if (primary().isPresent()) return Optional.empty();
            return views.stream().filter(v -> v.state().filter(s -> s.epoch() == top() && !s.successor().isEmpty()).isPresent())
                    .findFirst().map(v -> new HandingOver(v.node(), v.state().get().successor(), top()));
        }

        /**
         * The secondaries at the highest epoch: the copies that follow the primary (an old primary that handed over is
         * one of them once its successor is promoted: it names the successor, and pulls from it like any secondary).
         */
        List<View> followers() {
            return views.stream().filter(v -> v.state().filter(s -> s.role() == Role.SECONDARY && s.epoch() == top()).isPresent()).toList();
        }

        /**
         * The follower holding the most recent complete point, the successor a demote names: by its point's cut (a
         * handoff's final point on the old primary included: review s10, F6), then any holding a point. A tie keeps the
         * first in the id's order. A failover ranks every answering secondary instead, whatever its epoch ({@link
         * FailoverTarget}).
         */
        Optional<View> freshest() {
            var holding = followers().stream().filter(v -> !v.state().get().point().isEmpty()).toList();
            return holding.stream().filter(v -> v.pointCutAt().isPresent())
                    .reduce((best, v) -> v.pointCutAt().get().isAfter(best.pointCutAt().get()) ? v : best)
                    .or(() -> holding.stream().findFirst());
        }

        /** The follower with a round whose point was cut last (GetVolumeReplicationInfo reports a round's figures). */
        Optional<View> freshestRound() {
            var holding = followers().stream().filter(v -> !v.state().get().point().isEmpty()).toList();
            return holding.stream().filter(v -> v.lastRound().isPresent())
                    .max(Comparator.comparing(v -> v.lastRound().get().cutAt()))
                    .or(() -> holding.stream().findFirst());
        }

        Optional<View> anySecondary() {
            return followers().stream().findFirst();
        }

        DomainException noPrimary() {
            return DomainException.precondition("volume " + volume + " has no primary at epoch " + top() + " and no handoff in"
                    + " progress (a failed-over volume's old copy is fenced); publish it on a node holding a complete point");
        }
    }
}
