package io.csi4j.driver.engine;

import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The skeleton both engines share: a pool, its layout and its {@link ArtifactStore}, and every call that is the
 * same whatever an artifact is (an image file or a directory): listing, sidecars, idempotent re-creation, the
 * blank volume re-made from its row, deleting snapshots, undoing a group cut. An engine adds how it makes, cuts,
 * sizes and attaches its artifacts, and the {@link Capabilities} it offers. Open to the engines of other packages
 * ({@code engine.image}), which is why its hooks are protected.
 */
public abstract non-sealed class PoolEngine implements StorageEngine {
    protected final Pool pool;
    protected final PoolLayout layout;
    protected final IdLocks locks;
    protected final ArtifactStore store;
    private final String name;
    private final EngineCapabilities capabilities;

    protected PoolEngine(Pool pool, String name, EngineCapabilities capabilities, String suffix, EntryType type) {
        this.pool = pool;
        this.name = name;
        this.capabilities = capabilities;
        this.layout = PoolLayout.open(pool.path(), suffix);
        this.locks = layout.locks();
        this.store = new ArtifactStore(layout, type);
    }

    @Override
    public final String name() { return name; }

    @Override
    public final EngineCapabilities capabilities() { return capabilities; }

    /** What this engine offers beyond the core, built once when it is opened. */
    protected abstract Capabilities offered();

    @Override
    public final <C extends Capability> Optional<C> capability(Class<C> type) {
        return offered().find(type);
    }

    @Override
    public final void checkMutableParameters(Map<String, String> mutableParameters) {
        mutableParameters(mutableParameters);
    }

    /** The mutable parameters parsed, INVALID unless this engine can apply every one on this pool. */
    protected final MutableParameters mutableParameters(Map<String, String> mutableParameters) {
        MutableParameters parsed = MutableParameters.parse(mutableParameters, capabilities.mutableKeys());
        if (parsed.compression().isPresent() && !pool.filesystem().equals("btrfs")) {
            throw StorageException.invalid("compression needs a btrfs pool; this pool is " + pool.filesystem());
        }
        return parsed;
    }

    /** Checks every id before it becomes a path, then cuts ({@link #snapshotGroup}) with errors translated. */
    @Override
    public final Map<String, Long> createGroupSnapshot(Map<String, String> snapshotToVolume, Artifact.Label label,
                                                       FreezeHold held) {
        if (snapshotToVolume.isEmpty()) throw StorageException.invalid("no volumes to snapshot");
        Map<String, String> members = new TreeMap<>();
        snapshotToVolume.forEach((snap, vol) -> members.put(PoolLayout.checkId("snapshot", snap), PoolLayout.checkId("volume", vol)));
        return translate("snapshotting " + members, () -> snapshotGroup(members, label, held));
    }

    /** Cuts one snapshot per member (snapshot id -> volume id, in id order), consistent as this engine can make it. */
    protected abstract Map<String, Long> snapshotGroup(Map<String, String> members, Artifact.Label label, FreezeHold held);

    /** The sum of the volumes' nominal sizes, with those being made right now. */
    protected abstract long provisioned();

    /** The largest volume that can be made now, given what the pool's filesystem has and what is promised. */
    protected abstract long allocatable(FsStats stats, long provisioned);

    @Override
    public final PoolInfo pool() {
        return translate("reading pool " + pool.path(), () -> {
            FsStats stats = pool.stats();
            long provisioned = provisioned();
            return new PoolInfo(pool.path(), stats.type(), pool.reflink(), stats.totalBytes(), stats.availableBytes(),
                    provisioned, allocatable(stats, provisioned));
        });
    }

    /** The bytes volume {@code volumeId} is sized to now; {@code recorded} when the engine keeps no size of its own. */
    protected abstract long volumeSize(String volumeId, long recorded);

    /**
     * Under the id's lock, at re-making a blank volume from its row: makes what is missing (or too short) of it;
     * true when something was made.
     */
    protected abstract boolean remakeBlank(String volumeId, long sizeBytes, AccessType access, Artifact.Label label);

    /** Refuses a blank volume this engine cannot make (capacity, access type), before anything is written. */
    protected abstract void checkBlank(long sizeBytes, AccessType access);

    @Override
    public final boolean ensureBlankVolume(String volumeId, long sizeBytes, AccessType access, Artifact.Label label) {
        PoolLayout.checkId("volume", volumeId);
        checkBlank(sizeBytes, access);
        return translate("re-making blank volume " + volumeId, () -> locks.locked(volumeId, () ->
                remakeBlank(volumeId, sizeBytes, access, label) | store.settleBlank(blank(volumeId, sizeBytes, access, label))));
    }

    protected final Artifact blank(String volumeId, long size, AccessType access, Artifact.Label label) {
        return new Artifact(volumeId, Artifact.Kind.VOLUME, name(), size, access, "", Instant.now()).withLabel(label);
    }

    /**
     * True when the volume exists already as asked (labelled now if it was made without, by a version that
     * labelled afterwards); EXISTS when it exists otherwise.
     */
    protected final boolean existing(String volumeId, long size, String source, Artifact.Label label) {
        if (!store.exists(Artifact.Kind.VOLUME, volumeId)) return false;
        Optional<Artifact> recorded = layout.readSidecar(Artifact.Kind.VOLUME, volumeId);
        long existingSize = volumeSize(volumeId, recorded.map(Artifact::sizeBytes).orElse(size));
        String existingSource = recorded.map(Artifact::source).orElse(source);
        if (existingSize == size && existingSource.equals(source)) {
            store.relabel(Artifact.Kind.VOLUME, volumeId, label);
            return true;
        }
        throw StorageException.exists("volume " + volumeId + " exists with " + existingSize + " bytes"
                + (existingSource.isEmpty() ? "" : " from " + existingSource) + ", not " + size + " bytes"
                + (source.isEmpty() ? "" : " from " + source));
    }

    /** A new volume from a snapshot's or another volume's content: ids checked, the source required, then {@code make}. */
    protected final long fromSource(String volumeId, Artifact.Kind sourceKind, String sourceId, Supplier<Long> make) {
        String what = sourceKind == Artifact.Kind.SNAPSHOT ? "snapshot" : "source volume";
        PoolLayout.checkId("volume", volumeId);
        PoolLayout.checkId(what, sourceId);
        String verb = sourceKind == Artifact.Kind.SNAPSHOT ? "restoring snapshot " + sourceId + " into volume " + volumeId
                : "cloning volume " + sourceId + " into " + volumeId;
        return translate(verb, () -> {
            store.require(sourceKind, sourceId, what);
            return sourceKind == Artifact.Kind.VOLUME ? sourcesStayed(List.of(sourceId), make) : make.get();
        });
    }

    /**
     * Runs a cut or a copy from these volumes; when it fails because one of them was deleted meanwhile (a DeleteVolume
     * committed between our check and the read), NOT_FOUND: the delete won the race, nothing failed.
     */
    protected final <T> T sourcesStayed(Collection<String> volumeIds, Supplier<T> work) {
        try {
            return work.get();
        } catch (RuntimeException e) {
            for (String volumeId : volumeIds) {
                if (!store.exists(Artifact.Kind.VOLUME, volumeId)) {
                    StorageException gone = StorageException.notFound("volume " + volumeId + " was deleted while it was being read");
                    gone.addSuppressed(e);
                    throw gone;
                }
            }
            throw e;
        }
    }

    /** The volume's artifact (image or directory); NOT_FOUND when it does not exist. */
    protected final Path requireVolume(String volumeId) {
        store.require(Artifact.Kind.VOLUME, volumeId);
        return layout.artifact(Artifact.Kind.VOLUME, volumeId);
    }

    /** Undoes a group cut that failed: every member snapshot goes, committed or not; failures join {@code cause}. */
    protected final void deleteMembers(Collection<String> snapshotIds, RuntimeException cause) {
        for (String snapshotId : snapshotIds) {
            try {
                layout.delete(Artifact.Kind.SNAPSHOT, snapshotId);
            } catch (RuntimeException undo) {
                cause.addSuppressed(undo);
            }
        }
    }

    @Override
    public final void deleteSnapshot(String snapshotId) {
        store.delete(Artifact.Kind.SNAPSHOT, snapshotId);
    }

    @Override
    public final boolean holdsData(Artifact.Kind kind, String id) { return store.holdsData(kind, id); }

    @Override
    public final void syncDeletes() { store.syncDeletes(); }

    @Override
    public final Set<String> volumeArtifacts() { return store.ids(Artifact.Kind.VOLUME); }

    @Override
    public final Set<String> snapshotArtifacts() { return store.ids(Artifact.Kind.SNAPSHOT); }

    @Override
    public Optional<Artifact> artifact(Artifact.Kind kind, String id) { return store.sidecar(kind, id); }

    @Override
    public List<Path> removeTemporaryArtifacts() { return store.sweep(); }
}
