package io.csi4j.driver.replication;

import io.csi4j.driver.engine.DataMover;
import io.csi4j.driver.engine.InPlaceApply;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.id.ReplicatedVolumeId;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * A secondary's round journals (docs/inplace-rounds.md 1.3) as replication sees them: each journal a round applied in
 * place left (a crash, a power cut, or a commit that failed mid-apply) is finished and its point recorded, dropped when
 * the image was never written, or, when it fails its check or its apply, the copy made to hold no point (the image may
 * be torn). The engine ({@link InPlaceApply#replay}) decides which from the image and the journal; this records what it
 * answers in the replica's state. Every step under the volume's replication lock: {@link #atStartUp} takes it, the
 * callers of {@link #finish} hold it.
 */
final class JournalReplay {
    private static final Logger LOG = Logger.getLogger(JournalReplay.class.getName());

    private final ReplicaStates states;
    private final PoolStorage engine;

    JournalReplay(ReplicaStates states, PoolStorage engine) {
        this.states = states;
        this.engine = engine;
    }

    /**
     * At start-up, before any round and before {@code Rounds.finishCutShort} (which leaves a volume with a journal
     * alone): every journal found, finished or discarded; one of a volume that is no replicated volume or whose replica
     * is gone is dropped. Returns the volumes whose journal was found.
     */
    List<String> atStartUp() {
        InPlaceApply apply = engine.capability(InPlaceApply.class).orElse(null);
        if (apply == null) return List.of();
        List<String> found = new ArrayList<>();
        for (String volumeId : apply.journals()) {
            found.add(volumeId);
            var id = ReplicatedVolumeId.parse(volumeId);
            if (id.isEmpty()) {
                LOG.warning(() -> "a round journal of " + volumeId + ", which is no replicated volume, is dropped");
                apply.dropJournal(volumeId);
                continue;
            }
            states.exclusively(id.get(), () -> states.get(id.get()).map(s -> finish(id.get(), s)).orElseGet(() -> {
                LOG.warning(() -> "a round journal of " + volumeId + ", whose replica is gone, is dropped");
                apply.dropJournal(volumeId);
                return null;
            }));
        }
        return found;
    }

    /**
     * The copy's journal, finished or discarded, given its state {@code s}; returns the state after (one stat when there
     * is none: every round and failover asks, so a commit that failed mid-apply is finished before anything else). The
     * caller holds the volume's replication lock.
     */
    ReplicaState finish(ReplicatedVolumeId id, ReplicaState s) {
        InPlaceApply apply = engine.capability(InPlaceApply.class).orElse(null);
        if (apply == null) return s;
        return switch (apply.replay(id.toString(), s.point())) {
            case InPlaceApply.Replay.None none -> s;
            case InPlaceApply.Replay.Discarded d -> {
                LOG.warning(() -> "replica of " + id + ": a round applied in place was cut short before it wrote; its journal is"
                        + " dropped and the copy holds point " + s.point() + " (" + d.why() + ")");
                yield s;
            }
            case InPlaceApply.Replay.Applied a -> {
                ReplicaState now = states.holding(id, a.point());
                LOG.warning(() -> "replica of " + id + ": a round cut short mid-apply is finished from its journal: the image is"
                        + " point " + a.point() + " (the state named '" + s.point() + "')");
                yield now;
            }
            case InPlaceApply.Replay.Torn t -> {
                // no point first (a torn copy is never failed over to), then the replicas (the torn inode must not be
                // offered as a delta base), then the journal: a crash between repeats the steps
                ReplicaState now = states.holding(id, "");
                engine.capability(DataMover.class).ifPresent(m -> m.dropReplicas(id.toString()));
                apply.dropJournal(id.toString());
                LOG.severe(() -> "replica of " + id + ": its round journal could not be applied (" + t.why() + "); the image may be"
                        + " torn, so the copy now holds no point and its next round replaces it whole");
                yield now;
            }
        };
    }

    /** Drops the volume's journal, if any (its replica is deleted). */
    void drop(ReplicatedVolumeId id) {
        engine.capability(InPlaceApply.class).ifPresent(a -> a.dropJournal(id.toString()));
    }

    /** Whether the volume still has a journal (one a replay could not drop): {@code finishCutShort} leaves it alone. */
    boolean pending(ReplicatedVolumeId id) {
        return engine.capability(InPlaceApply.class).map(a -> a.journals().contains(id.toString())).orElse(false);
    }
}
