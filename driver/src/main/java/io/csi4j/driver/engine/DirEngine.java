package io.csi4j.driver.engine;

import io.csi4j.driver.storage.StorageException;
import static io.csi4j.driver.engine.EngineErrors.run;
import static io.csi4j.driver.engine.EngineErrors.translate;

import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.os.FsStats;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.ProjectQuota;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Volumes are directories, {@code <pool>/volumes/<id>.dir}; snapshots are copies of the tree
 * ({@code <pool>/snapshots/<id>.dir}) with a reflink per file where the pool can. No block volumes. Capacity is
 * enforced when the pool's filesystem enforces project quotas (XFS {@code prjquota}): each volume directory gets
 * its own project id and a hard block limit of its capacity ({@link DirQuotas}); without them it is only recorded.
 * A directory cannot be frozen, so group snapshots are refused while a member is published writable: they could
 * not be write-order consistent. Stage does nothing; publish is a bind mount of the volume's directory
 * ({@link DirNode}); a freeze hold only checks that no member is published writable ({@link DirFreezer}).
 */
public final class DirEngine extends PoolEngine {

    /**
     * The recorded sizes of the volumes, summed once at open and kept up to date by every change here: reading every
     * sidecar at each CreateVolume's space check made a create cost O(volumes) (60/s at 5,000 volumes).
     */
    private final AtomicLong provisionedBytes = new AtomicLong();
    private final Capabilities offered = Capabilities.builder()
            .add(NodeStorage.class, new DirNode(this))
            .add(Freezer.class, new DirFreezer(this))
            .build();

    /** Present when the pool's filesystem enforces project quotas: capacity is then a hard limit. */
    private final Optional<DirQuotas> quotas;

    private DirEngine(Pool pool) {
        super(pool, "dir", new EngineCapabilities(false, List.of(), Set.of("compression")), ".dir", EntryType.DIRECTORY);
        long sum = 0;
        Map<String, Path> dirs = new TreeMap<>();
        for (String id : layout.ids(Artifact.Kind.VOLUME)) {
            sum += recordedSize(Artifact.Kind.VOLUME, id);
            if (layout.exists(Artifact.Kind.VOLUME, id, EntryType.DIRECTORY)) dirs.put(id, dir(id));
        }
        provisionedBytes.set(sum);
        quotas = DirQuotas.of(pool.path());
        quotas.ifPresent(q -> q.reconcile(dirs, id -> recordedSize(Artifact.Kind.VOLUME, id)));
    }

    public static DirEngine open(Pool pool) {
        return new DirEngine(pool);
    }

    @Override
    protected Capabilities offered() {
        return offered;
    }

    @Override
    protected long provisioned() {
        return provisionedBytes.get();
    }

    /** Capacity is not enforced: what a new volume can get is what the filesystem has free. */
    @Override
    protected long allocatable(FsStats stats, long provisioned) {
        return stats.availableBytes();
    }

    @Override
    public List<String> notices() {
        return List.of(pool.describe(), quotas.isPresent()
                ? "dir engine: volume capacity enforced as a hard limit by project quotas (a project id per volume); no block volumes"
                : "dir engine: volume capacity is recorded but NOT enforced (the pool's filesystem has no project quotas: "
                  + "put the data dir on XFS mounted with prjquota to enforce it); no block volumes");
    }

    /** Whether volume capacity is a hard limit here (project quotas). */
    public boolean enforcesCapacity() {
        return quotas.isPresent();
    }

    /** The volume's project quota usage and limit; empty without quotas or for a volume without an id. */
    Optional<ProjectQuota.Usage> quotaUsage(String volumeId) {
        return quotas.flatMap(q -> q.usage(volumeId));
    }

    /** The volume's project id, if it has one (tests, messages). */
    OptionalInt projectId(String volumeId) {
        return quotas.map(q -> q.id(volumeId)).orElse(OptionalInt.empty());
    }

    /** A volume found already made (a retried create) that a failure left without its id gets it now. */
    private void ensureQuota(String volumeId, long sizeBytes) {
        quotas.filter(q -> q.id(volumeId).isEmpty()).ifPresent(q -> q.attachTree(volumeId, dir(volumeId), sizeBytes));
    }

    Path dir(String volumeId) {
        return layout.artifact(Artifact.Kind.VOLUME, volumeId);
    }

    private static AccessType checkAccess(AccessType access) {
        if (access instanceof AccessType.Block) throw StorageException.invalid("the dir engine has no block volumes");
        return access;
    }

    // ---- controller side ----

    /** Capacity is recorded, not enforced: a directory is the size asked. */
    @Override
    public long blankSize(long capacityBytes, AccessType access) {
        checkAccess(access);
        if (capacityBytes < 0) throw StorageException.invalid("negative capacity: " + capacityBytes);
        return capacityBytes;
    }

    @Override
    public long createVolume(String volumeId, long capacityBytes, AccessType access, Artifact.Label label) {
        PoolLayout.checkId("volume", volumeId);
        blankSize(capacityBytes, access);
        // sidecar, then the directory, under their final names and unsynced: a blank volume is derivable from its row
        return translate("creating volume " + volumeId, () -> locks.locked(volumeId, () -> {
            if (existing(volumeId, capacityBytes, "", label)) {
                ensureQuota(volumeId, capacityBytes);
                return capacityBytes;
            }
            makeBlank(volumeId, capacityBytes, access, label);
            return capacityBytes;
        }));
    }

    private void makeBlank(String volumeId, long capacityBytes, AccessType access, Artifact.Label label) {
        layout.writeSidecarUnsynced(blank(volumeId, capacityBytes, access, label));
        try {
            Files.createDirectory(dir(volumeId));
        } catch (IOException e) {
            PoolLayout.deleteQuietly(layout.sidecar(Artifact.Kind.VOLUME, volumeId));
            throw new UncheckedIOException("creating " + dir(volumeId), e);
        }
        try {
            quotas.ifPresent(q -> q.attach(volumeId, dir(volumeId), capacityBytes)); // before the row: never acknowledged without
        } catch (RuntimeException e) {
            PoolLayout.deleteQuietly(dir(volumeId));
            PoolLayout.deleteQuietly(layout.sidecar(Artifact.Kind.VOLUME, volumeId));
            throw e;
        }
        provisionedBytes.addAndGet(capacityBytes);
    }

    @Override
    protected void checkBlank(long sizeBytes, AccessType access) {
        checkAccess(access);
    }

    @Override
    protected boolean remakeBlank(String volumeId, long sizeBytes, AccessType access, Artifact.Label label) {
        if (store.exists(Artifact.Kind.VOLUME, volumeId)) return false;
        makeBlank(volumeId, sizeBytes, access, label);
        return true;
    }

    /** A directory has no size of its own: the one recorded at create is its size. */
    @Override
    protected long volumeSize(String volumeId, long recorded) {
        return recorded;
    }

    @Override
    public long restoreSnapshot(String volumeId, String snapshotId, long capacityBytes, AccessType access,
                                Artifact.Label label) {
        checkAccess(access);
        return fromSource(volumeId, Artifact.Kind.SNAPSHOT, snapshotId, () -> materialize(volumeId,
                layout.artifact(Artifact.Kind.SNAPSHOT, snapshotId), recordedSize(Artifact.Kind.SNAPSHOT, snapshotId),
                capacityBytes, access, Artifact.snapshotSource(snapshotId), label));
    }

    @Override
    public long cloneVolume(String volumeId, String sourceVolumeId, long capacityBytes, AccessType access,
                            Artifact.Label label) {
        checkAccess(access);
        return fromSource(volumeId, Artifact.Kind.VOLUME, sourceVolumeId, () -> materialize(volumeId, dir(sourceVolumeId),
                recordedSize(Artifact.Kind.VOLUME, sourceVolumeId), capacityBytes, access, Artifact.volumeSource(sourceVolumeId), label));
    }

    private long recordedSize(Artifact.Kind kind, String id) {
        return store.readableSidecar(kind, id).map(Artifact::sizeBytes).orElse(0L);  // a torn sidecar counts 0
    }

    private long materialize(String volumeId, Path source, long sourceSize, long capacityBytes, AccessType access,
                             String sourceRef, Artifact.Label label) {
        if (capacityBytes != 0 && capacityBytes < sourceSize) {
            throw StorageException.outOfRange(sourceRef + " holds " + sourceSize + " bytes; " + capacityBytes + " cannot hold it");
        }
        long size = Math.max(capacityBytes, sourceSize);
        if (existing(volumeId, size, sourceRef, label)) {
            ensureQuota(volumeId, size);
            return size;
        }
        layout.writeSidecar(new Artifact(volumeId, Artifact.Kind.VOLUME, name(), size, access, sourceRef, Instant.now())
                .withLabel(label));
        copyInto(source, Artifact.Kind.VOLUME, volumeId);
        // its own id, the copied tree tagged (the source's files kept theirs); a failure here is finished by a retry
        quotas.ifPresent(q -> q.attachTree(volumeId, dir(volumeId), size));
        provisionedBytes.addAndGet(size);
        return size;
    }

    /** Copies a tree into .tmp, then renames it into place: a crash never leaves half a tree under an id. */
    private void copyInto(Path source, Artifact.Kind kind, String id) {
        Path temp = layout.temporary(id, ".dir");
        try {
            TreeCopy.copy(source, temp, pool.reflink());
            layout.commit(temp, kind, id);
        } finally {
            PoolLayout.deleteQuietly(temp);
        }
    }

    @Override
    public void deleteVolume(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        run("deleting volume " + volumeId, () -> locks.locked(volumeId, () -> {  // one deleter counts the size
            long size = 0;
            if (layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.DIRECTORY)) {
                List<MountInfo> mounts = mountsOf(MountTable.read(), volumeId);
                if (!mounts.isEmpty()) {
                    throw StorageException.inUse("volume " + volumeId + " is mounted at "
                            + mounts.stream().map(MountInfo::mountPoint).toList());
                }
                size = recordedSize(Artifact.Kind.VOLUME, volumeId);
            }
            layout.deleteUnsynced(Artifact.Kind.VOLUME, volumeId);  // durable by the caller's tombstone
            quotas.ifPresent(q -> q.detach(volumeId));                // its files are gone: the limit and the id go
            provisionedBytes.addAndGet(-size);
            return null;
        }));
    }

    /** Mounts of the volume's directory (or inside it) anywhere, and mounts on top of something in it. */
    List<MountInfo> mountsOf(MountTable table, String volumeId) {
        Path dir = dir(volumeId);
        List<MountInfo> mounts = new ArrayList<>(table.under(dir));
        Binds.identity(table, dir).ifPresent(id -> table.mounts().stream().filter(id::covers).forEach(mounts::add));
        return mounts;
    }

    @Override
    public boolean inUse(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("looking up volume " + volumeId, () -> !mountsOf(MountTable.read(), volumeId).isEmpty());
    }

    /** Records the new size, then raises the project's limit (online: nothing else to grow). */
    @Override
    public long expandVolume(String volumeId, long newCapacityBytes) {
        PoolLayout.checkId("volume", volumeId);
        return translate("expanding volume " + volumeId, () -> locks.locked(volumeId, () -> {   // not after a delete
            store.require(Artifact.Kind.VOLUME, volumeId);
            Artifact artifact = layout.readSidecar(Artifact.Kind.VOLUME, volumeId).orElseGet(() ->
                    new Artifact(volumeId, Artifact.Kind.VOLUME, name(), 0, AccessType.mount(""), "", Instant.now()));
            if (newCapacityBytes <= artifact.sizeBytes()) return artifact.sizeBytes();
            layout.writeSidecar(artifact.withSize(newCapacityBytes));
            quotas.ifPresent(q -> q.resize(volumeId, newCapacityBytes));
            provisionedBytes.addAndGet(newCapacityBytes - artifact.sizeBytes());
            return newCapacityBytes;
        }));
    }

    @Override
    public long createSnapshot(String snapshotId, String volumeId, Artifact.Label label) {
        PoolLayout.checkId("snapshot", snapshotId);
        PoolLayout.checkId("volume", volumeId);
        return translate("snapshotting volume " + volumeId, () -> snapshot(snapshotId, volumeId, label));
    }

    private long snapshot(String snapshotId, String volumeId, Artifact.Label label) {
        store.require(Artifact.Kind.VOLUME, volumeId);
        Artifact volume = layout.readSidecar(Artifact.Kind.VOLUME, volumeId).orElseGet(() ->
                new Artifact(volumeId, Artifact.Kind.VOLUME, name(), 0, AccessType.mount(""), "", Instant.now()));
        if (layout.exists(Artifact.Kind.SNAPSHOT, snapshotId, EntryType.DIRECTORY)) {
            Optional<Artifact> existing = layout.readSidecar(Artifact.Kind.SNAPSHOT, snapshotId);
            String source = existing.map(Artifact::source).orElse("");
            if (!source.equals(Artifact.volumeSource(volumeId))) {
                throw StorageException.exists("snapshot " + snapshotId + " exists of " + source + ", not of volume " + volumeId);
            }
            store.relabel(Artifact.Kind.SNAPSHOT, snapshotId, label);
            return existing.get().sizeBytes();
        }
        layout.writeSidecar(new Artifact(snapshotId, Artifact.Kind.SNAPSHOT, name(), volume.sizeBytes(), volume.access(),
                Artifact.volumeSource(volumeId), Instant.now()).withLabel(label));
        copyInto(dir(volumeId), Artifact.Kind.SNAPSHOT, snapshotId);
        return volume.sizeBytes();
    }

    /** Nothing to freeze here, with or without a hold: a member published writable is refused. */
    @Override
    protected Map<String, Long> snapshotGroup(Map<String, String> members, Artifact.Label label, FreezeHold held) {
        MountTable table = MountTable.read();
        for (String volumeId : members.values()) {
            store.require(Artifact.Kind.VOLUME, volumeId);
            List<Path> writable = mountsOf(table, volumeId).stream().filter(m -> !m.readOnly()).map(MountInfo::mountPoint).toList();
            if (!writable.isEmpty()) {
                throw StorageException.inUse("volume " + volumeId + " is published writable at " + writable
                        + "; a directory cannot be frozen, so a group snapshot could not be write-order consistent");
            }
        }
        Map<String, Long> sizes = new TreeMap<>();
        try {
            sourcesStayed(members.values(), () -> {
                members.forEach((snapshotId, volumeId) -> sizes.put(snapshotId, snapshot(snapshotId, volumeId, label)));
                return null;
            });
        } catch (RuntimeException e) {
            deleteMembers(members.keySet(), e);
            throw e;
        }
        return sizes;
    }

    /** Only {@code compression}, on btrfs pools: set on the directory, new files in it inherit it. */
    @Override
    public void modifyVolume(String volumeId, Map<String, String> mutableParameters) {
        PoolLayout.checkId("volume", volumeId);
        MutableParameters parameters = mutableParameters(mutableParameters);
        run("modifying volume " + volumeId, () -> {
            store.require(Artifact.Kind.VOLUME, volumeId);
            parameters.compression().ifPresent(c -> MutableParameters.setBtrfsCompression(dir(volumeId), c));
        });
    }

    @Override
    public Optional<String> volumeCondition(String volumeId) {
        PoolLayout.checkId("volume", volumeId);
        return translate("checking volume " + volumeId, () -> layout.exists(Artifact.Kind.VOLUME, volumeId, EntryType.DIRECTORY)
                ? Optional.empty() : Optional.of("volume directory " + dir(volumeId) + " is missing"));
    }

    @Override
    public void close() {
        // nothing held
    }
}
