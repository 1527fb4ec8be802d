package io.csi4j.driver.replication;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.json.Json;
import io.csi4j.driver.os.Durable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Every replicated volume's {@link ReplicaState} on this node, one file each: {@code <data-dir>/replication/<id>.json}.
 * A change is written to a temporary file, fsynced and renamed into place (the directory fsynced) before the method
 * returns, so an answer that depends on it (a promotion, a fence) is never given before it would survive a crash.
 * Changes of one volume are serialized; the transitions only ever raise the epoch:
 * <ul>
 *   <li>{@link #create}: the state at creation (epoch 1), idempotent for the same state;</li>
 *   <li>{@link #promote}: primary at an epoch higher than any this node knows (the same one again when it is already
 *       its primary: a retried handoff);</li>
 *   <li>{@link #failover}: a secondary holding a complete point becomes primary at a higher epoch without its old
 *       primary, noting why (the volume's condition);</li>
 *   <li>{@link #demote}: secondary of a higher epoch, naming the node handed to (an old primary in a handoff);</li>
 *   <li>{@link #learnEpoch}: a higher epoch seen from another node fences a copy that is not a secondary of it;</li>
 *   <li>{@link #follow}: a secondary behind the primary's epoch, or a fenced copy, becomes a secondary of it (the fenced
 *       one holding no point);</li>
 *   <li>{@link #checkWritable}: what writable stage and publish ask first (PRECONDITION unless primary,
 *       UNAVAILABLE while the primary is unconfirmed: {@link PrimaryConfirmations}).</li>
 * </ul>
 * A <b>tombstone</b>, {@code <id>.deleted} beside the states ({@link #markDeleted}), is this node's durable memory that
 * the volume was deleted while another replica's node did not answer: the controller sweeps that node's leftover when
 * it answers again, and routing answers NOT_FOUND for the id meanwhile (docs/replication.md, "Deletion"). A tombstoned
 * id is never made again here ({@link #create} is ABORTED): ids are random and never reused, so a tombstone can only
 * name a volume the CO deleted.
 */
public final class ReplicaStates {
    /** Under the data directory. */
    public static final String DIRECTORY = "replication";
    private static final String SUFFIX = ".json";
    private static final String TMP = ".tmp";
    private static final String DELETED = ".deleted";

    private final Path dir;
    /** Each volume's state-file lock: one read-change-write at a time. */
    private final VolumeLocks locks = new VolumeLocks();
    /** Each volume's replication lock ({@link #exclusively}): held across a role change and what it looks at. */
    private final VolumeLocks useLocks = new VolumeLocks();
    /** In memory: this process's primaries start unconfirmed (docs/replication.md, "Confirmation"). */
    private final PrimaryConfirmations confirmations;
    private final ForgottenNodes forgotten;

    /** Opens (creating) the directory and removes temporary files a crash left. */
    public ReplicaStates(Path dir) {
        this(dir, new PrimaryConfirmations());
    }

    /** As above, with the confirmations (and their clock) a test drives. */
    ReplicaStates(Path dir, PrimaryConfirmations confirmations) {
        this.confirmations = confirmations;
        this.dir = dir;
        this.forgotten = new ForgottenNodes(dir);
        try {
            Durable.createDirectories(dir);
            try (var files = Files.list(dir)) {
                for (Path p : files.filter(p -> p.getFileName().toString().endsWith(TMP)).toList()) Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public PrimaryConfirmations confirmations() {
        return confirmations;
    }

    /** The nodes declared permanently lost, kept in this directory ({@link ForgottenNodes}). */
    public ForgottenNodes forgottenNodes() {
        return forgotten;
    }

    /** The controller's own act made it primary at its epoch: confirmed (it told this node the epoch just now). */
    private ReplicaState confirmedBy(ReplicatedVolumeId id, ReplicaState s) {
        if (s.role() == ReplicaState.Role.PRIMARY) confirmations.confirm(id, s.epoch());
        return s;
    }

    public Optional<ReplicaState> get(ReplicatedVolumeId id) {
        Path file = file(id);
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            Map<String, String> m = Json.parseStringMap(text);
            return Optional.of(new ReplicaState(Long.parseLong(m.get("epoch")),
                    ReplicaState.Role.valueOf(m.get("role")), m.getOrDefault("point", ""), m.getOrDefault("successor", ""),
                    m.getOrDefault("failover", ""), m.getOrDefault("replaced", "")));
        } catch (RuntimeException damaged) {
            throw DomainException.failed("replication state " + file + " is damaged: " + damaged.getMessage());
        }
    }

    /** The replicated volumes this node holds a state of. */
    public List<ReplicatedVolumeId> ids() {
        try (var files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(SUFFIX))
                    .map(n -> ReplicatedVolumeId.parse(n.substring(0, n.length() - SUFFIX.length())))
                    .flatMap(Optional::stream).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public ReplicaState create(ReplicatedVolumeId id, ReplicaState initial) {
        return confirmedBy(id, change(id, current -> {
            if (deleted(id).isPresent()) {
                throw DomainException.aborted("volume " + id + " was deleted; its leftovers on other nodes are being swept: retry");
            }
            if (current.isPresent() && !current.get().equals(initial)) {
                throw DomainException.exists("replica of " + id + " is already " + current.get());
            }
            return initial;
        }));
    }

    public ReplicaState promote(ReplicatedVolumeId id, long epoch) {
        return promote(id, epoch, "");
    }

    /**
     * As {@link #promote(ReplicatedVolumeId, long)}, noting {@code replaced}: the silent nodes the old primary's note named
     * when the controller handed over past them ({@link ReplicaState#replaced}, carried so the next handoff may pass them).
     */
    public ReplicaState promote(ReplicatedVolumeId id, long epoch, String replaced) {
        return confirmedBy(id, change(id, current -> {
            var s = required(id, current);
            if (epoch == s.epoch() && s.writable()) return s;                  // a retried promotion
            // Strictly higher: a node that already knows epoch E never becomes E's primary, so each epoch has one.
            if (epoch <= s.epoch()) {
                throw DomainException.precondition("replica of " + id + " is " + s.role() + " at epoch " + s.epoch()
                        + "; it cannot become primary at epoch " + epoch);
            }
            return new ReplicaState(epoch, ReplicaState.Role.PRIMARY, s.point(), "", "", replaced);
        }));
    }

    /**
     * The promotion that ends a handoff's final pull, unless this agent noticed a silence of the controller since
     * {@code gapsBefore} ({@link PrimaryConfirmations#gaps}, read when the pull started): then the controller may have
     * stopped waiting for this pull and failed the volume over elsewhere (a handoff towards a silent node is failed over
     * from), and a promotion now would make a primary that confirms itself by the act though no one asked for it
     * recently (UNAVAILABLE, the point is kept; the CO's retry starts a new handoff: review s10, F2).
     */
    public ReplicaState promoteAfterPull(ReplicatedVolumeId id, long epoch, long gapsBefore) {
        return promoteAfterPull(id, epoch, gapsBefore, "");
    }

    /** As above, noting the carried {@code replaced} nodes ({@link #promote(ReplicatedVolumeId, long, String)}). */
    public ReplicaState promoteAfterPull(ReplicatedVolumeId id, long epoch, long gapsBefore, String replaced) {
        if (confirmations.gaps() != gapsBefore) {
            throw DomainException.unavailable("replica of " + id + " on this node heard nothing from the controller for the"
                    + " failover delay during the handoff's final pull: not promoted to epoch " + epoch + " (the volume may have"
                    + " failed over meanwhile); retry the publish");
        }
        return promote(id, epoch, replaced);
    }

    /**
     * A failover (docs/replication.md): this secondary's latest complete point becomes the primary at {@code epoch},
     * strictly above every epoch this node knows, and {@code note} is kept as the volume's condition. A retry at the
     * same epoch is a no-op; a copy holding no point yet has nothing to promote (PRECONDITION).
     */
    public ReplicaState failover(ReplicatedVolumeId id, long epoch, String note) {
        return confirmedBy(id, change(id, current -> {
            var s = required(id, current);
            if (epoch == s.epoch() && s.writable()) return s;
            if (s.role() != ReplicaState.Role.SECONDARY || epoch <= s.epoch()) {
                throw DomainException.precondition("replica of " + id + " is " + s.role() + " at epoch " + s.epoch()
                        + "; it cannot fail over to primary at epoch " + epoch);
            }
            if (s.point().isEmpty()) {
                throw DomainException.precondition("replica of " + id + " holds no complete point yet: nothing to fail over to");
            }
            return new ReplicaState(epoch, ReplicaState.Role.PRIMARY, s.point(), "", note);
        }));
    }

    /**
     * The primary steps down to a secondary of {@code epoch}, above its own, handing over to {@code successor}: the
     * first step of a handoff, before the successor is promoted. A retry naming the same successor is a no-op; one
     * naming another node at the same epoch is PRECONDITION, so two deciders cannot hand one epoch to two nodes. Only a
     * primary steps down: a FENCED copy (its image took writes no primary has) or a SECONDARY demoted on a stale view
     * would become the source of a handoff's final point, a fenced one's discarded writes included (review s10, F2).
     */
    public ReplicaState demote(ReplicatedVolumeId id, long epoch, String successor) {
        return change(id, current -> {
            var s = required(id, current);
            if (epoch == s.epoch() && s.role() == ReplicaState.Role.SECONDARY && s.successor().equals(successor)) return s;
            if (epoch == s.epoch() && !s.successor().isEmpty()) {
                throw DomainException.precondition("replica of " + id + " was handed to node '" + s.successor()
                        + "' at epoch " + epoch + ", not to '" + successor + "'");
            }
            if (!s.writable() || epoch <= s.epoch()) {
                throw DomainException.precondition("replica of " + id + " is " + s.role() + " at epoch " + s.epoch()
                        + "; only a primary steps down, to a secondary of a higher epoch (asked: " + epoch + ")");
            }
            return new ReplicaState(epoch, ReplicaState.Role.SECONDARY, s.point(), successor);
        });
    }

    /**
     * A round's point, pulled from {@code from}: recorded as {@link #holding} does; and a copy that handed over to
     * {@code from} forgets it. That node cut a point for an ordinary round, which only a primary does, so the handoff is
     * done; a successor left named made every later failover from that node look like a handoff still running
     * (refused for ever: review s10, F2). {@link #demote} refuses a second demotion of a copy that is not primary, so
     * the name is no longer needed to stop a second decider.
     */
    public ReplicaState holdingFrom(ReplicatedVolumeId id, String point, String from) {
        return change(id, current -> {
            var s = required(id, current).holding(point);
            if (s.role() != ReplicaState.Role.SECONDARY || s.successor().isEmpty() || !s.successor().equals(from)) return s;
            return new ReplicaState(s.epoch(), s.role(), s.point(), "", s.failover());
        });
    }

    /**
     * A primary answers at {@code epoch} (after a failover or a handoff elsewhere) and this copy follows it: a SECONDARY
     * below it moves up keeping the point it holds (a complete image, and the base of its next round); a FENCED copy at
     * or below it becomes a SECONDARY holding <b>no</b> point (its image has writes no primary has: they are discarded by
     * its next round, which replaces its image whole with the primary's point, and until then it is never failed over to). A SECONDARY already at {@code epoch}
     * is a no-op. A primary, or any copy above {@code epoch}, is PRECONDITION: only a fence or a handoff ends a primary,
     * and an epoch never goes down.
     */
    public ReplicaState follow(ReplicatedVolumeId id, long epoch) {
        return change(id, current -> {
            var s = required(id, current);
            if (s.role() == ReplicaState.Role.SECONDARY && s.epoch() == epoch) return s;
            boolean behind = s.role() == ReplicaState.Role.SECONDARY ? s.epoch() < epoch
                    : s.role() == ReplicaState.Role.FENCED && s.epoch() <= epoch;
            if (!behind) {
                throw DomainException.precondition("replica of " + id + " is " + s.role() + " at epoch " + s.epoch()
                        + "; it cannot follow the primary of epoch " + epoch);
            }
            String point = s.role() == ReplicaState.Role.FENCED ? "" : s.point();
            return new ReplicaState(epoch, ReplicaState.Role.SECONDARY, point, "");
        });
    }

    /** Another node answered {@code seen}: a higher epoch fences this copy unless it already follows it. */
    public ReplicaState learnEpoch(ReplicatedVolumeId id, long seen) {
        return change(id, current -> {
            var s = required(id, current);
            if (seen <= s.epoch()) return s;
            return new ReplicaState(seen, ReplicaState.Role.FENCED, s.point(), "");
        });
    }

    public ReplicaState holding(ReplicatedVolumeId id, String point) {
        return change(id, current -> required(id, current).holding(point));
    }

    /**
     * PRECONDITION (FAILED_PRECONDITION at the edge) unless this copy is the primary; UNAVAILABLE while the primary is
     * unconfirmed ({@link PrimaryConfirmations}); an unreplicated id passes.
     */
    public void checkWritable(String volumeId) {
        var id = ReplicatedVolumeId.parse(volumeId);
        if (id.isEmpty()) return;
        var s = get(id.get());
        if (s.isEmpty()) throw DomainException.notFound("volume " + volumeId + " has no replica on this node");
        if (!s.get().writable()) {
            throw DomainException.precondition("replica of " + volumeId + " on this node is " + s.get().role()
                    + " at epoch " + s.get().epoch() + ": only the primary of the highest epoch is writable");
        }
        confirmations.checkConfirmed(id.get(), s.get().epoch());
    }

    /**
     * Runs {@code work} holding the volume's replication lock. Every agent step that changes or relies on the copy's
     * role together with its use here holds it ({@code Rounds}: demote, which looks for a mount first; fence, which
     * stops the mounts' writes after the state; rounds, follow, confirm, delete), and so does a writable stage or
     * publish ({@link #whileWritable}) from its check to its mount. Without it a stage that passed its check mounted a
     * copy that a demote (it saw no mount yet) or a fence (it found no mount to stop) had meanwhile made a secondary or
     * fenced: writes after a handoff's final point, or a fenced copy taking writes (review 2026-11-27 s10, F1).
     * Reentrant; the state file's own lock is taken inside it, never around it.
     */
    public <T> T exclusively(ReplicatedVolumeId id, Supplier<T> work) {
        return useLocks.call(id.toString(), work);
    }

    /**
     * A writable stage or publish: {@code use} runs only if this copy is the confirmed primary ({@link #checkWritable}),
     * checked and run under the volume's replication lock ({@link #exclusively}), so a demote or fence either sees the
     * mount it makes or comes after it and makes it refused. A copy that is not writable is refused before the lock
     * (a secondary's round may hold it for long). An unreplicated id just runs {@code use}.
     */
    public void whileWritable(String volumeId, Runnable use) {
        var id = ReplicatedVolumeId.parse(volumeId);
        if (id.isEmpty()) {
            use.run();
            return;
        }
        checkWritable(volumeId);
        exclusively(id.get(), () -> {
            checkWritable(volumeId);
            use.run();
            return null;
        });
    }

    /**
     * {@link io.csi4j.driver.snapshot.SnapshotSources} of a node with replication: UNAVAILABLE unless this copy is the
     * primary (of the highest epoch it knows: a copy that learnt a higher one is FENCED); a copy that stepped down for
     * a handoff answers so until its successor is promoted, and the CO's retry is routed there. An unreplicated id,
     * or one without a copy here (the volume's own lookup answers), passes. A snapshot that passed just before a
     * handoff's demote is of the primary still: a demote needs the copy unstaged and unpublished, so nothing writes.
     */
    public void checkSnapshotSource(String volumeId) {
        var id = ReplicatedVolumeId.parse(volumeId);
        if (id.isEmpty()) return;
        var s = get(id.get());
        if (s.isPresent() && !s.get().writable()) {
            throw DomainException.unavailable("replica of " + volumeId + " on this node is " + s.get().role() + " at epoch "
                    + s.get().epoch() + (s.get().successor().isEmpty() ? "" : ", handing over to node '" + s.get().successor() + "'")
                    + ": only the primary is snapshotted; retry");
        }
    }

    public void delete(ReplicatedVolumeId id) {
        withLock(id, () -> {
            try {
                if (Files.deleteIfExists(file(id))) Durable.fsyncDirectory(dir);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /**
     * Writes this node's tombstone of {@code id} (when it was deleted), fsynced and renamed into place with the directory
     * fsynced before it returns; a tombstone already there is kept as it is (its time is the first delete's).
     */
    public void markDeleted(ReplicatedVolumeId id, java.time.Instant at) {
        withLock(id, () -> {
            if (deleted(id).isEmpty()) writeAtomically(tombstone(id), Json.write(Map.of("deletedAt", String.valueOf(at.getEpochSecond()))) + "\n");
        });
    }

    /** When this node deleted {@code id} while a peer did not answer, if it holds that tombstone. */
    public Optional<java.time.Instant> deleted(ReplicatedVolumeId id) {
        Path file = tombstone(id);
        try {
            return Optional.of(java.time.Instant.ofEpochSecond(Long.parseLong(Json.parseStringMap(
                    Files.readString(file, StandardCharsets.UTF_8)).get("deletedAt"))));
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (RuntimeException damaged) {
            // a tombstone is only ever written whole (renamed into place): damage means the disk, and the id stays deleted
            return Optional.of(java.time.Instant.EPOCH);
        }
    }

    /** Every tombstone this node holds, and when it was written. */
    public Map<ReplicatedVolumeId, java.time.Instant> tombstones() {
        var found = new LinkedHashMap<ReplicatedVolumeId, java.time.Instant>();
        try (var files = Files.list(dir)) {
            for (String n : files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(DELETED)).sorted().toList()) {
                ReplicatedVolumeId.parse(n.substring(0, n.length() - DELETED.length()))
                        .ifPresent(id -> deleted(id).ifPresent(at -> found.put(id, at)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return found;
    }

    /** Drops the tombstone (the controller saw every replica's node hold nothing of the id); OK when there is none. */
    public void forgetDeleted(ReplicatedVolumeId id) {
        withLock(id, () -> {
            try {
                if (Files.deleteIfExists(tombstone(id))) Durable.fsyncDirectory(dir);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    private void withLock(ReplicatedVolumeId id, Runnable work) {
        locks.run(id.toString(), work);
    }

    /** How many volumes have a lock entry now (either lock): only those held or waited on. */
    int lockEntries() {
        return locks.size() + useLocks.size();
    }

    private interface Transition {
        ReplicaState apply(Optional<ReplicaState> current);
    }

    private ReplicaState change(ReplicatedVolumeId id, Transition transition) {
        return locks.call(id.toString(), () -> {
            var current = get(id);
            ReplicaState next = transition.apply(current);
            if (current.isEmpty() || !current.get().equals(next)) write(id, next);
            return next;
        });
    }

    private void write(ReplicatedVolumeId id, ReplicaState state) {
        var m = new LinkedHashMap<String, Object>();
        m.put("epoch", String.valueOf(state.epoch()));
        m.put("role", state.role().name());
        m.put("point", state.point());
        m.put("successor", state.successor());
        m.put("failover", state.failover());
        m.put("replaced", state.replaced());
        writeAtomically(file(id), Json.write(m) + "\n");
    }

    /** A temporary file, fsynced, renamed over {@code file} (atomicRename fsyncs the directory). */
    private void writeAtomically(Path file, String text) {
        Path tmp = file.resolveSibling(file.getFileName() + TMP);
        try {
            Files.writeString(tmp, text, StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
            Durable.fsync(tmp);
            Durable.atomicRename(tmp, file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path tombstone(ReplicatedVolumeId id) {
        return dir.resolve(id + DELETED);
    }

    private static ReplicaState required(ReplicatedVolumeId id, Optional<ReplicaState> current) {
        return current.orElseThrow(() -> DomainException.notFound("volume " + id + " has no replica on this node"));
    }

    private Path file(ReplicatedVolumeId id) {
        return dir.resolve(id + SUFFIX);                // the id's shape admits no '/' and no leading '.'
    }
}
