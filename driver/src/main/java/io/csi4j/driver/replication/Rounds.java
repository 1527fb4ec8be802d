package io.csi4j.driver.replication;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.ChangeCheck;
import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.WriteFence;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.mobility.SourceNode;
import io.csi4j.driver.mobility.VolumeImports;
import io.csi4j.driver.model.SnapshotFilter;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.volume.ReplicationParameters;
import io.csi4j.driver.volume.Volumes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * An agent's part of replication (docs/replication.md), both sides, every step under the volume's lock so that a
 * DeleteVolume never races a round: a round that finds the volume or its state gone stops (NOT_FOUND) and never makes
 * anything again.
 * <ul>
 *   <li>Primary: {@link #cutPoint} cuts a crash-consistent internal point (a snapshot, frozen if staged) for one
 *       secondary and drops that secondary's older points but the one it says it holds.</li>
 *   <li>Secondary: {@link #pull} asks the primary for a point, pulls the delta since the point it holds, replaces
 *       its copy whole (or writes the delta into it under a journal, docs/inplace-rounds.md section 1) and records the
 *       point durably; with a promotion epoch (a handoff) it then becomes primary.</li>
 * </ul>
 * Points are snapshots named {@code csi4j-point-}{@code <volume>-<secondary tag>-<n>}: hidden from ListSnapshots, not
 * deletable as user snapshots, and each held by the one secondary it was cut for (so a point's holder is in its name).
 */
public final class Rounds {
    private static final Logger LOG = Logger.getLogger(Rounds.class.getName());

    /** The current primary as a secondary sees it: where points are cut and read from. */
    public interface Primary {
        /**
         * The primary cuts a point for {@code holder}, which holds {@code held} (empty: none); returns its snapshot id.
         * With {@code mayKeepHeld}, {@code held} itself when the primary proved its volume unchanged since (no new point).
         */
        String cutPoint(String volumeId, String holder, String held, boolean mayKeepHeld);

        SourceNode source();
    }

    /** What one pull did. */
    public record Pulled(String point, long bytesReceived, String base, ReplicaState state) {}

    private final ReplicaStates states;
    private final Volumes volumes;
    private final Snapshots snapshots;
    private final VolumeImports imports;
    private final PoolStorage engine;
    private final String nodeId;
    private final RoundLog log;
    /** The journals rounds applied in place left: replayed at start-up, and before each round and failover. */
    private final JournalReplay journals;
    /** When each secondary here last tried a round (System.nanoTime); a volume first seen counts from then. */
    private final Map<String, Long> lastTry = new ConcurrentHashMap<>();
    /** Each secondary's rounds that failed in a row here: the next is tried sooner ({@link RoundDeadline}). */
    private final Map<String, Integer> failedInARow = new ConcurrentHashMap<>();

    /**
     * One replica of this node, whether a round of it is due, and for a FENCED copy whether it is in use here (staged or
     * published: it cannot {@link #follow} yet; false for any other role, which is not looked at).
     */
    public record Entry(ReplicatedVolumeId id, ReplicaState state, boolean due, boolean inUse) {}

    /**
     * This node's replicas (every state file, also one whose volume row a crash left half made or half deleted: a sweep
     * must see it); a secondary is due when its volume's row exists and its next round must start for the point it holds to stay
     * within the interval ({@link RoundDeadline}).
     */
    public List<Entry> list() {
        List<Entry> entries = new ArrayList<>();
        long now = System.nanoTime();
        List<Held> held = held();
        // a delete racing an earlier listing or lag look may have had its volume remembered again after it forgot it
        Set<String> present = new java.util.HashSet<>();
        held.forEach(h -> present.add(h.id().toString()));
        remembered().stream().filter(v -> !present.contains(v) && ReplicatedVolumeId.parse(v).flatMap(states::get).isEmpty())
                .forEach(this::forget);
        for (Held h : held) {
            if (h.interval().isEmpty()) {                                      // being made or deleted: listed (a sweep finds it), never due
                entries.add(new Entry(h.id(), h.state(), false, false));
                continue;
            }
            long last = lastTry.computeIfAbsent(h.id().toString(), k -> now);
            long wait = RoundDeadline.waitAfterStart(h.interval().get(), log.last(h.id().toString()).map(RoundLog.Round::took),
                    failedInARow.getOrDefault(h.id().toString(), 0)).toNanos();
            boolean due = h.state().role() == ReplicaState.Role.SECONDARY && now - last >= wait;
            entries.add(new Entry(h.id(), h.state(), due, h.state().role() == ReplicaState.Role.FENCED && inUse(h.id())));
        }
        return entries;
    }

    /** Whether a loop device backs the copy's image here; true when that cannot be told (follow decides under the lock). */
    private boolean inUse(ReplicatedVolumeId id) {
        try {
            return engine.inUse(id.toString());
        } catch (RuntimeException e) {
            return true;
        }
    }

    /** One replica of this node with its interval and, for a secondary, its last complete round here (if any since start). */
    public record Status(ReplicatedVolumeId id, ReplicaState state, java.time.Duration interval, java.util.Optional<RoundLog.Round> last) {}

    /** This node's replicas as {@code csi4j cluster status} shows them; rows being made or deleted are left out. */
    public List<Status> status() {
        List<Status> all = new ArrayList<>();
        for (Held h : held()) {
            h.interval().ifPresent(interval -> all.add(new Status(h.id(), h.state(), interval, log.last(h.id().toString()))));
        }
        return all;
    }

    /** A state file of this node, and its volume's interval (empty while the volume row is being made or deleted). */
    private record Held(ReplicatedVolumeId id, ReplicaState state, java.util.Optional<java.time.Duration> interval) {}

    /**
     * Every state file here with its volume row's interval, read once per volume: what {@link #list} (every tick) and
     * {@link #status} both walk. A state deleted meanwhile is left out.
     */
    private List<Held> held() {
        List<Held> all = new ArrayList<>();
        for (ReplicatedVolumeId id : states.ids()) {
            var state = states.get(id);
            if (state.isEmpty()) continue;
            var interval = volumes.reads().byId(id.toString())
                    .map(row -> ReplicationParameters.of(row.parameters(), row.mutableParameters()).interval());
            all.add(new Held(id, state.get(), interval));
        }
        return all;
    }

    /**
     * On the primary: the first secondary whose newest point was cut more than two intervals ago (docs/replication.md,
     * "Volume condition"), as the volume's abnormal condition naming it and how far behind it is. Counted from when this
     * agent first saw the copy as primary at its epoch when no point was cut for it since: a new volume, a handoff or an
     * agent restart start the count afresh. A point is cut at the start of each round, so the condition clears at the
     * next round of that secondary. Empty on a secondary, a fenced copy, or a volume not replicated here.
     */
    public java.util.Optional<String> lagCondition(String volumeId) {
        var parsed = ReplicatedVolumeId.parse(volumeId);
        if (parsed.isEmpty()) return java.util.Optional.empty();
        ReplicatedVolumeId id = parsed.get();
        var state = states.get(id);
        var row = volumes.reads().byId(volumeId);
        if (state.isEmpty() || row.isEmpty() || !state.get().writable()) return java.util.Optional.empty();
        java.time.Duration interval = ReplicationParameters.of(row.get().parameters(), row.get().mutableParameters()).interval();
        java.time.Instant now = java.time.Instant.now();
        long epoch = state.get().epoch();
        java.time.Instant since = primarySince.compute(volumeId, (k, was) -> was != null && was.epoch() == epoch ? was : new Since(epoch, now)).at();
        int self = id.replicaIndex(nodeId);
        List<SnapshotRecord> cut = points(id);
        for (int i = 0; i < id.tags().size(); i++) {
            if (i == self) continue;
            String tag = id.tags().get(i);
            java.time.Instant last = cut.stream().filter(p -> isPointOf(p.name(), id, tag)).map(SnapshotRecord::createdAt)
                    .filter(t -> t.isAfter(since)).max(java.util.Comparator.naturalOrder()).orElse(since);
            java.time.Instant current = kept.get(id + "@" + tag);                 // a held point found current counts as cut then
            if (current != null && current.isAfter(last)) last = current;
            java.time.Duration behind = java.time.Duration.between(last, now);
            if (behind.compareTo(interval.multipliedBy(2)) > 0) {
                return java.util.Optional.of("replica on node '" + tag + "' is " + behind.toSeconds() + "s behind: no point cut for it"
                        + " since " + last + " (interval " + interval.toSeconds() + "s, abnormal past two intervals)");
            }
        }
        return java.util.Optional.empty();
    }

    /**
     * When this agent first saw each volume as primary, at the epoch it is primary of now: the lag count's start without
     * a point. One entry a volume (a new epoch replaces it), removed with the volume ({@link #delete}).
     */
    private final Map<String, Since> primarySince = new ConcurrentHashMap<>();

    private record Since(long epoch, java.time.Instant at) {}

    /** This node's id (what a forget-node naming it is refused for). */
    public String nodeId() {
        return nodeId;
    }

    public Rounds(ReplicaStates states, Volumes volumes, Snapshots snapshots, VolumeImports imports, PoolStorage engine, String nodeId) {
        this(states, volumes, snapshots, imports, engine, nodeId, new RoundLog(nodeId));
    }

    /** As above, recording each complete round of a secondary here in {@code log} (metrics). */
    public Rounds(ReplicaStates states, Volumes volumes, Snapshots snapshots, VolumeImports imports, PoolStorage engine, String nodeId,
            RoundLog log) {
        this.log = log;
        this.states = states;
        this.volumes = volumes;
        this.snapshots = snapshots;
        this.imports = imports;
        this.engine = engine;
        this.nodeId = nodeId;
        this.journals = new JournalReplay(states, engine);
    }

    /** The last complete round of this node's secondary copy of {@code id} since the agent started, if any. */
    public java.util.Optional<RoundLog.Round> lastRound(ReplicatedVolumeId id) {
        return log.last(id.toString());
    }

    /**
     * When the point this node's copy of {@code id} holds was cut, whatever made it (review s10, F6): a point this node
     * cut itself (a handoff's final point, kept by the old primary) by its snapshot record's creation here (only the
     * node that cut a point has a record of it: a secondary keeps replicas), else the last round's cut; empty when
     * neither is known (no point, or a round before the round log).
     */
    public java.util.Optional<java.time.Instant> pointCutAt(ReplicatedVolumeId id) {
        var state = states.get(id);
        if (state.isEmpty() || state.get().point().isEmpty()) return java.util.Optional.empty();
        String point = state.get().point();
        var own = points(id).stream().filter(p -> p.id().equals(point)).map(SnapshotRecord::createdAt).findFirst();
        return own.or(() -> lastRound(id).map(RoundLog.Round::cutAt));
    }

    /**
     * On the primary, or on an old primary that handed over to {@code holder} (the final point of a handoff: it
     * refuses writable use already, so nothing is written after this point).
     */
    public String cutPoint(ReplicatedVolumeId id, String holder, String held) {
        return cutPoint(id, holder, held, false);
    }

    /**
     * As above; with {@code mayKeepHeld} (a holder that takes its held point back as the round's, never a handoff's final
     * point) the held point itself, with nothing cut, when it is this holder's point here and the engine proves the
     * volume unchanged since ({@link ChangeCheck}: not staged nor published, the image's extents the point's).
     */
    public String cutPoint(ReplicatedVolumeId id, String holder, String held, boolean mayKeepHeld) {
        return locked(id, () -> {
            ReplicaState s = state(id);
            boolean handingOver = s.role() == ReplicaState.Role.SECONDARY && s.successor().equals(holder);
            if (!s.writable() && !handingOver) {
                throw DomainException.precondition("replica of " + id + " on node '" + nodeId + "' is " + s.role() + " at epoch "
                        + s.epoch() + "; points are cut by the primary");
            }
            String prefix = SnapshotRecord.POINT_PREFIX + id + "-" + ObjectId.nodeTag(holder) + "-";
            if (mayKeepHeld && !handingOver && unchangedSince(id, prefix, held)) {
                int index = id.replicaIndex(holder);                              // the lag condition's key: the id's tag
                kept.put(id + "@" + (index >= 0 ? id.tags().get(index) : ObjectId.nodeTag(holder)), java.time.Instant.now());
                LOG.fine(() -> "replica of " + id + " on node '" + holder + "' keeps point " + held + ": the volume is unchanged since");
                return held;
            }
            SnapshotRecord point = snapshots.createPoint(prefix + System.nanoTime(), id.toString(), held);
            // this holder's older points go, but the one it holds: its next pull is a delta against it
            for (SnapshotRecord old : points(id)) {
                if (isPointFor(old.name(), prefix) && !old.id().equals(point.id()) && !old.id().equals(held)) snapshots.deletePoint(old.id());
            }
            var mover = engine.capability(DataMover.class);
            if (handingOver) {
                // the successor pulls exactly this point: kept here as the replica this copy's image equals (nothing writes
                // to a demoted copy), the common base of its first round from the successor. The replica is durable, the
                // others gone, before the state names it: a crash between leaves one replica other than the state's point,
                // which finishCutShort rolls forward to (the same content as the image).
                if (mover.isPresent() && mover.get().keepSnapshotAsReplica(id.toString(), point.id())) states.holding(id, point.id());
            } else {
                // a primary's replica of a point its predecessor cut (for this holder's handoff) is the holder's base
                // until the holder holds another point; one of a point this node cut itself (kept when it handed over,
                // before a failover made it primary again) is no one's base: its snapshot serves if it is still kept
                Set<String> notNeeded = Set.copyOf(List.of(ObjectId.nodeTag(holder), ObjectId.nodeTag(nodeId)));
                mover.ifPresent(m -> m.replicas().stream()
                        .filter(r -> r.sourceVolumeId().equals(id.toString()) && !r.snapshotId().equals(held))
                        .filter(r -> ObjectId.parse(ObjectId.Kind.SNAPSHOT, r.snapshotId())
                                .map(o -> notNeeded.contains(o.nodeTag())).orElse(false))
                        .forEach(m::dropReplica));
            }
            return point.id();
        });
    }

    /** Whether {@code held} is {@code prefix}'s point of {@code id} here and the volume is proven unchanged since it. */
    private boolean unchangedSince(ReplicatedVolumeId id, String prefix, String held) {
        if (held.isEmpty()) return false;
        var check = engine.capability(ChangeCheck.class);
        if (check.isEmpty()) return false;
        boolean ours = points(id).stream().anyMatch(p -> p.id().equals(held) && isPointFor(p.name(), prefix));
        return ours && check.get().unchangedSince(id.toString(), held);
    }

    /**
     * Whether the point named {@code name} was cut for the holder whose names start with {@code prefix} ("...-tag-"):
     * the rest is the cut's System.nanoTime(), digits only. A bare startsWith also took the points of a holder whose
     * tag starts with this one's and a dash ("worker-1" and "worker-1-gpu" are both node tags): a cut for one deleted
     * the point the other holds (its base) and counted the other's cuts in this one's lag.
     */
    static boolean isPointFor(String name, String prefix) {
        if (!name.startsWith(prefix)) return false;
        int at = prefix.length() + (name.startsWith("-", prefix.length()) ? 1 : 0);   // nanoTime may be negative
        if (at == name.length()) return false;
        for (int i = at; i < name.length(); i++) {
            if (name.charAt(i) < '0' || name.charAt(i) > '9') return false;
        }
        return true;
    }

    /**
     * Whether the point named {@code name} was cut for the holder that {@code id} names by {@code tag}. Points are named
     * with the holder's node tag ({@link ObjectId#nodeTag}: the node id itself when it is a short DNS name), while an
     * id longer than {@link ReplicatedVolumeId#MAX_LENGTH} carries the hash of a long node name instead (three nodes
     * named like "ip-10-0-1-23.eu-west-1.compute.internal"): matched by prefix only, such a holder had no points, and
     * the lag condition called its volume abnormal two intervals after every start as primary.
     */
    static boolean isPointOf(String name, ReplicatedVolumeId id, String tag) {
        String volume = SnapshotRecord.POINT_PREFIX + id + "-";
        if (isPointFor(name, volume + tag + "-")) return true;
        if (!tag.startsWith("_") || !name.startsWith(volume)) return false;
        // "<holder>-<nanos>" or "<holder>--<nanos>": a node tag ends with a letter or digit, never a dash
        int end = name.length();
        while (end > volume.length() && name.charAt(end - 1) >= '0' && name.charAt(end - 1) <= '9') end--;
        if (end == name.length() || name.charAt(end - 1) != '-') return false;
        end -= name.charAt(end - 2) == '-' ? 2 : 1;
        if (end <= volume.length()) return false;
        String holder = name.substring(volume.length(), end);
        return ObjectId.hashedTag(holder).equals(tag);
    }

    /** When each holder's point was last found current without a cut ("volume@holder tag"): its lag counts from then. */
    private final Map<String, java.time.Instant> kept = new ConcurrentHashMap<>();

    /** On a secondary: one round, or with {@code promoteEpoch > 0} the last step of a handoff to this node. */
    public Pulled pull(ReplicatedVolumeId id, Primary primary, long promoteEpoch) {
        return pull(id, primary, promoteEpoch, "");
    }

    /**
     * As above; a handoff's promotion notes {@code replaced}, the silent nodes the old primary's note named that the
     * controller handed over past ({@link ReplicaState#replaced}; empty: none, or an older controller).
     */
    public Pulled pull(ReplicatedVolumeId id, Primary primary, long promoteEpoch, String replaced) {
        try {
            Pulled pulled = locked(id, () -> promoteEpoch > 0 ? finalPull(id, primary, promoteEpoch, replaced) : round(id, primary));
            failedInARow.remove(id.toString());
            return pulled;
        } catch (RuntimeException e) {
            failedInARow.merge(id.toString(), 1, Integer::sum);     // tried again sooner than the interval (RoundDeadline)
            throw e;
        }
    }

    /**
     * One round, under the lock: the primary cuts a point for this copy, or proves the one it holds current (nothing
     * copied); else the delta since the held point is pulled and the point recorded, durably, before the answer.
     */
    private Pulled round(ReplicatedVolumeId id, Primary primary) {
        ReplicaState s = journals.finish(id, state(id));       // a journal a failed commit left: first
        if (s.writable()) throw doesNotPull(id, s);
        var started = new Started(System.nanoTime(), java.time.Instant.now());
        lastTry.put(id.toString(), started.nanos());
        // the held point may come back, nothing to copy (the primary proved it current)
        boolean mayKeep = !s.point().isEmpty();
        String point = primary.cutPoint(id.toString(), nodeId, s.point(), mayKeep);
        if (mayKeep && point.equals(s.point())) {
            if (!s.successor().isEmpty()) states.holdingFrom(id, point, primary.source().nodeId());
            long took = System.nanoTime() - started.nanos();
            log.completed(id.toString(), new RoundLog.Round(started.cutAt(), java.time.Instant.now(), 0, java.time.Duration.ofNanos(took)));
            LOG.info(() -> "replica of " + id + " still holds point " + point + " from node '" + primary.source().nodeId()
                    + "': 0 bytes (the volume is unchanged since) in " + took / 1_000_000 + " ms");
            return new Pulled(point, 0, point, s);
        }
        var pulled = fetch(id, s, point, primary);
        // durable before the answer; an ordinary round from the node this copy handed over to ends that handoff
        return held(id, started, point, primary, pulled, states.holdingFrom(id, point, primary.source().nodeId()));
    }

    /**
     * The last step of a handoff to this node, under the lock: the old primary's final point is pulled as a round's
     * would be, then this copy becomes primary of {@code epoch}, only if its agent heard the controller throughout
     * ({@link ReplicaStates#promoteAfterPull}). A retry finds it primary of that epoch by this handoff and passes; a
     * primary of that epoch by a failover never pulled the final point (review s10, F3).
     */
    private Pulled finalPull(ReplicatedVolumeId id, Primary primary, long epoch, String replaced) {
        ReplicaState s = journals.finish(id, state(id));       // a journal a failed commit left: first
        if (s.writable() && s.epoch() == epoch && s.failover().isEmpty()) return new Pulled(s.point(), 0, "", s);
        if (s.writable() && s.epoch() == epoch) {
            throw DomainException.precondition("replica of " + id + " on node '" + nodeId + "' was failed over to at epoch "
                    + s.epoch() + " (" + s.failover() + "), not handed over: the handoff's final point was never pulled here");
        }
        if (s.writable()) throw doesNotPull(id, s);
        long startedNanos = System.nanoTime();
        long gapsBefore = states.confirmations().gaps();
        var started = new Started(startedNanos, java.time.Instant.now());
        lastTry.put(id.toString(), started.nanos());
        String point = primary.cutPoint(id.toString(), nodeId, s.point(), false);
        var pulled = fetch(id, s, point, primary);
        states.holding(id, point);                          // durable before the promotion, and both before the answer
        return held(id, started, point, primary, pulled, states.promoteAfterPull(id, epoch, gapsBefore, replaced));
    }

    /** When a pull started (System.nanoTime) and the cut time it records: at the latest, so the lag shown is never less. */
    private record Started(long nanos, java.time.Instant cutAt) {}

    private DomainException doesNotPull(ReplicatedVolumeId id, ReplicaState s) {
        return DomainException.precondition("replica of " + id + " on node '" + nodeId + "' is the primary at epoch "
                + s.epoch() + "; it does not pull");
    }

    /** Pulls {@code point} into a new image beside this copy's and renames it over the image. */
    private VolumeImports.Pulled fetch(ReplicatedVolumeId id, ReplicaState s, String point, Primary primary) {
        // holding no point past epoch 1 is a fenced old primary that followed: its image, almost the point, is a base
        // to resync against by checksums (an epoch-1 copy holding none is a new one, its image blank)
        // a delta against the point held may go into the image in place (docs/inplace-rounds.md, section 1)
        try {
            return imports.pullPoint(id.toString(), point, primary.source(), s.point().isEmpty() && s.epoch() > 1, s.point());
        } catch (RuntimeException e) {
            journals.finish(id, s);      // a commit that failed mid-apply: finished or the point dropped before the lock goes
            throw e;
        }
    }

    /** After the pull: the round's figures (a primary holds no point of another's), the log line, the answer. */
    private Pulled held(ReplicatedVolumeId id, Started started, String point, Primary primary, VolumeImports.Pulled pulled, ReplicaState now) {
        long took = System.nanoTime() - started.nanos();
        long millis = took / 1_000_000;
        if (now.writable()) log.forget(id.toString());
        else log.completed(id.toString(), new RoundLog.Round(started.cutAt(), java.time.Instant.now(), pulled.bytesReceived(),
                java.time.Duration.ofNanos(took)));
        LOG.info(() -> "replica of " + id + " now holds point " + point + " from node '" + primary.source().nodeId() + "': "
                + pulled.bytesReceived() + " bytes" + (pulled.baseSnapshotId().isEmpty()
                ? (pulled.byChecksums() ? " (by checksums against its own image)" : " (full)") : " since " + pulled.baseSnapshotId())
                + (pulled.byChecksums() && !pulled.baseSnapshotId().isEmpty() ? " (by checksums)" : "")
                + (pulled.inPlace() ? " (in place)" : "")
                + " in " + millis + " ms");
        return new Pulled(point, pulled.bytesReceived(), pulled.baseSnapshotId(), now);
    }

    /**
     * At start-up, before {@link #finishCutShort} and before serving: each round applied in place that a crash or power
     * cut stopped after its journal was complete is finished from the journal, or the journal dropped when the image was
     * never written (docs/inplace-rounds.md, 1.3); a journal that fails its check or its apply makes the copy hold no
     * point (the image may be torn). Returns the volumes whose journal was found ({@link JournalReplay}).
     */
    public List<String> replayJournals() {
        return journals.atStartUp();
    }

    /**
     * At start-up, before any round: finishes each round a crash or power cut stopped after its new replica was durable
     * and before its point was recorded. The commit keeps the new point's replica (dropping the old one), then renames
     * the new image over the volume's, then records the point; a cut in between leaves the state naming the old point
     * with only the new one's replica kept, and the image either point (docs/power-cut.md, finding 5). The replica is
     * complete and synced, so the round is rolled forward: it becomes the image again, whole, and its point is
     * recorded. Only a secondary's copy (a primary's image has moved on from any replica it keeps) whose one replica
     * names another point than its state; returns the volumes finished.
     */
    public List<String> finishCutShort() {
        DataMover mover = engine.capability(DataMover.class).orElse(null);
        if (mover == null) return List.of();
        List<String> finished = new ArrayList<>();
        for (ReplicatedVolumeId id : states.ids()) {
            locked(id, () -> {
                var s = states.get(id).orElse(null);
                var row = volumes.reads().byId(id.toString());
                if (s == null || row.isEmpty() || s.role() != ReplicaState.Role.SECONDARY) return null;
                // a journal left (a replay that could not drop it) is replayJournals' to finish, not this rule's
                if (journals.pending(id)) return null;
                var other = mover.replicas().stream().filter(r -> r.sourceVolumeId().equals(id.toString()))
                        .filter(r -> !r.snapshotId().equals(s.point())).toList();
                if (other.size() != 1) return null;
                var kept = other.get(0);
                try {
                    volumes.changes().replaceImage(id.toString(), row.get().capacityBytes(), kept, kept, target -> { });
                    states.holding(id, kept.snapshotId());
                } catch (RuntimeException e) {   // e.g. staged: the agent still starts; the next round is a full copy
                    LOG.warning(() -> "replica of " + id + ": could not finish a round cut short at point " + kept.snapshotId() + ": " + e);
                    return null;
                }
                LOG.warning(() -> "replica of " + id + ": a round cut short after its replica of point " + kept.snapshotId()
                        + " was durable (the state still named '" + s.point() + "') is finished: the image is that point again");
                finished.add(id.toString());
                return null;
            });
        }
        return finished;
    }

    /**
     * On a secondary whose primary's node is gone (the controller decided, docs/replication.md "Failover"): its latest
     * complete point, already the volume's image, becomes the primary at {@code epoch}; the note names when, from
     * which point and which node it replaces.
     */
    public ReplicaState failover(ReplicatedVolumeId id, long epoch, String replacedNode) {
        return locked(id, () -> {
            ReplicaState s = journals.finish(id, state(id));            // never promote a copy a failed apply left torn
            String note = FailoverNote.of(java.time.Instant.now(), s.point(), replacedNode);
            ReplicaState now = states.failover(id, epoch, note);
            log.forget(id.toString());
            LOG.warning(() -> "replica of " + id + ": " + now.failover() + " (epoch " + now.epoch() + ")");
            return now;
        });
    }

    /**
     * This node learns that {@code epoch} exists elsewhere: a copy not following it is fenced, durably, and then its
     * mounted filesystem stops taking writes ({@link WriteFence}: read-only, EROFS), all before the answer. The state
     * goes first: a crash between the two leaves FENCED with a writable mount, which {@link #enforceFences} fixes at
     * start-up; the other order could leave a read-only primary nothing repairs. A repeat re-applies both.
     */
    public ReplicaState fence(ReplicatedVolumeId id, long epoch) {
        return locked(id, () -> {
            ReplicaState now = states.learnEpoch(id, epoch);
            if (now.role() == ReplicaState.Role.FENCED) stopWrites(id);
            return now;
        });
    }

    /**
     * The controller saw every node of the volume answer in one tick with this copy primary at {@code epoch}, the
     * highest: it is confirmed, unless it is no longer PRIMARY at that epoch (a fence or handoff since the listing).
     */
    public boolean confirm(ReplicatedVolumeId id, long epoch) {
        return locked(id, () -> {
            var s = states.get(id);
            if (s.isEmpty() || s.get().role() != ReplicaState.Role.PRIMARY || s.get().epoch() != epoch) return false;
            states.confirmations().confirm(id, epoch);
            LOG.info(() -> "replica of " + id + " on node '" + nodeId + "' confirmed primary at epoch " + epoch);
            return true;
        });
    }

    /**
     * At the agent's start-up, before it serves: every FENCED copy's mounts are made read-only again (a crash after the
     * state was written and before the remount, or a remount lost with a reboot's fresh mount). Failures are logged:
     * the state still refuses writable stage and publish, and the next fence retries.
     */
    public void enforceFences() {
        for (ReplicatedVolumeId id : states.ids()) {
            try {
                var s = states.get(id);
                if (s.isPresent() && s.get().role() == ReplicaState.Role.FENCED) locked(id, () -> stopWrites(id));
            } catch (RuntimeException e) {
                LOG.warning(() -> "replica of " + id + " is fenced but its mounts could not be made read-only at start-up: " + e);
            }
        }
    }

    private List<String> stopWrites(ReplicatedVolumeId id) {
        var fence = engine.capability(WriteFence.class);
        if (fence.isEmpty()) return List.of();
        List<String> done = fence.get().stopWrites(id.toString());
        if (!done.isEmpty()) LOG.warning(() -> "replica of " + id + " on node '" + nodeId + "' is fenced; its writes stopped: " + done);
        return done;
    }

    /**
     * A primary answers at {@code epoch} and this copy is behind it ({@link ReplicaStates#follow}): it becomes a secondary
     * of that epoch and gets rounds from the primary. A FENCED copy only when nothing uses it on this node: no loop
     * device on its image (staged, or published, which needs a stage), so a round never replaces an image under a mount
     * (PRECONDITION otherwise, nothing changed); its image's writes since the failover are then discarded by its next
     * round, a resync by checksums against a still copy of that image (docs/replication.md). The catalog's
     * ControllerPublish record is not asked: after a failover the CO's ControllerUnpublishVolume of the old node goes to
     * the new primary, so the old node's record stays.
     */
    public ReplicaState follow(ReplicatedVolumeId id, long epoch) {
        return locked(id, () -> {
            ReplicaState s = state(id);
            if (s.role() == ReplicaState.Role.FENCED && engine.inUse(id.toString())) {
                throw DomainException.precondition("fenced replica of " + id + " is still staged on node '" + nodeId
                        + "': it follows epoch " + epoch + " once unstaged");
            }
            ReplicaState now = states.follow(id, epoch);
            if (!now.equals(s)) {
                LOG.info(() -> "replica of " + id + " on node '" + nodeId + "' was " + s.role() + " at epoch " + s.epoch()
                        + ": now a secondary of epoch " + epoch + (now.point().isEmpty() ? " holding no point (its next round replaces its image by checksums against it)"
                        : " holding point " + now.point()));
            }
            return now;
        });
    }

    /** The first step of a handoff, on the old primary: from here it refuses writable stage and publish. */
    public ReplicaState demote(ReplicatedVolumeId id, long epoch, String successor) {
        return locked(id, () -> {
            if (!volumes.reads().publishedNodes(id.toString()).isEmpty()) {
                throw DomainException.precondition("volume " + id + " is still published on node '" + nodeId + "'");
            }
            if (engine.inUse(id.toString())) throw DomainException.precondition("volume " + id + " is still staged on node '" + nodeId + "'");
            return states.demote(id, epoch, successor);
        });
    }

    /**
     * This node's replica, whole: the volume (FAILED_PRECONDITION while staged, or published when it is the primary:
     * nothing deleted; a copy that is not the primary drops its stale ControllerPublish records first), its
     * points, the replicas of points it pulled, then the state. Under the lock: a round waits, then finds nothing.
     * With {@code tombstone} (another replica's node did not answer the delete), this node's tombstone is written,
     * durably, after the one step that may refuse and before anything else goes, so the node that did not answer is
     * swept when it answers again (docs/replication.md, "Deletion").
     */
    public void delete(ReplicatedVolumeId id, boolean tombstone) {
        locked(id, () -> {
            // only the primary's publications are the CO's: a superseded copy's own record is stale (the CO's
            // ControllerUnpublishVolume after the failover went to the new primary), so it refuses nothing; a mount does
            if (states.get(id).map(s -> s.role() != ReplicaState.Role.PRIMARY).orElse(false)) volumes.publications().unpublish(id.toString(), "");
            volumes.deletion().delete(id.toString());
            if (tombstone) states.markDeleted(id, java.time.Instant.now());
            for (SnapshotRecord p : points(id)) snapshots.deletePoint(p.id());
            engine.capability(DataMover.class).ifPresent(m -> m.dropReplicas(id.toString()));
            journals.drop(id);
            states.delete(id);
            forget(id.toString());
            log.forget(id.toString());
            return null;
        });
    }

    /** What this agent remembers in memory of a volume whose replica here is gone: its lag count, its rounds' timing. */
    private void forget(String volumeId) {
        lastTry.remove(volumeId);
        failedInARow.remove(volumeId);
        primarySince.remove(volumeId);
        kept.keySet().removeIf(k -> k.startsWith(volumeId + "@"));
    }

    /** The volumes this agent remembers anything of in memory (lag counts, rounds' timing): for tests that they go. */
    Set<String> remembered() {
        Set<String> all = new java.util.TreeSet<>();
        all.addAll(lastTry.keySet());
        all.addAll(failedInARow.keySet());
        all.addAll(primarySince.keySet());
        kept.keySet().forEach(k -> all.add(k.substring(0, k.lastIndexOf('@'))));
        return all;
    }

    private List<SnapshotRecord> points(ReplicatedVolumeId id) {
        List<SnapshotRecord> found = new ArrayList<>();
        long after = 0;
        while (true) {
            var page = snapshots.list(after, 500, SnapshotFilter.bySourceVolume(id.toString()));
            page.items().stream().filter(SnapshotRecord::isPoint).forEach(found::add);
            if (!page.more()) return found;
            after = page.lastSeq();
        }
    }

    private ReplicaState state(ReplicatedVolumeId id) {
        return states.get(id).orElseThrow(() -> DomainException.notFound("volume " + id + " has no replica on node '" + nodeId + "'"));
    }

    /** The volume's replication lock, which a writable stage or publish also holds (ReplicaStates.exclusively). */
    private <T> T locked(ReplicatedVolumeId id, Supplier<T> work) {
        return states.exclusively(id, work);
    }
}
