package io.csi4j.driver.engine;

import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The pool side of an engine held in memory, for the domain rules' fast tests (no root, no kernel). It keeps
 * the {@link PoolStorage} contract as the real engines do (sizes in whole MiB, EXISTS for an id reused with
 * other arguments, NOT_FOUND for a missing source, OUT_OF_RANGE below a snapshot's size, NO_SPACE beyond the
 * pool, IN_USE while attached) and lets a test attach a volume or make the next effect fail.
 */
public final class MemoryPool implements PoolStorage {
    static final long MIB = 1L << 20;

    private record Entry(Artifact artifact, Map<String, String> mutable) {}

    private final long totalBytes;
    private final Map<String, Entry> volumes = new ConcurrentHashMap<>();
    private final Map<String, Entry> snapshots = new ConcurrentHashMap<>();
    private final Set<String> attached = ConcurrentHashMap.newKeySet();
    private volatile String failNext;
    private final java.util.concurrent.atomic.AtomicLong writes = new java.util.concurrent.atomic.AtomicLong();
    /** What this engine makes: block and mount volumes, ext4 or xfs, and only readAheadKiB (no compression here). */
    private static final EngineCapabilities CAPABILITIES =
            new EngineCapabilities(true, List.of("ext4", "xfs"), Set.of("readAheadKiB"));

    public MemoryPool(long totalBytes) {
        this.totalBytes = totalBytes;
    }

    /** The volume is staged on this node from now on (or no longer). */
    public void attach(String volumeId, boolean on) {
        if (on) attached.add(volumeId); else attached.remove(volumeId);
    }

    /** The next call of this name ("createVolume", "restoreSnapshot", ...) fails, as a full disk would. */
    public void failNext(String method) {
        failNext = method;
    }

    /** How many calls that change artifacts were made (failed ones too): none means nothing was written. */
    public long writes() {
        return writes.get();
    }

    public long sizeOf(String volumeId) {
        return volumes.get(volumeId).artifact().sizeBytes();
    }

    @Override public String name() { return "memory"; }

    @Override
    public PoolInfo pool() {
        long provisioned = volumes.values().stream().mapToLong(e -> e.artifact().sizeBytes()).sum();
        return new PoolInfo(Path.of("/memory"), "memory", true, totalBytes, totalBytes - provisioned, provisioned,
                PoolInfo.allocatable(totalBytes, totalBytes - provisioned, provisioned, 1.0));
    }

    @Override public List<String> notices() { return List.of(); }

    @Override public EngineCapabilities capabilities() { return CAPABILITIES; }

    @Override
    public long blankSize(long capacityBytes, AccessType access) {
        return roundUp(capacityBytes);
    }

    @Override
    public void checkMutableParameters(Map<String, String> mutableParameters) {
        MutableParameters.parse(mutableParameters, CAPABILITIES.mutableKeys());
    }

    @Override
    public synchronized long createVolume(String volumeId, long capacityBytes, AccessType access, Artifact.Label label) {
        effect("createVolume");
        long size = roundUp(capacityBytes);
        Entry there = volumes.get(volumeId);
        if (there != null) {
            if (there.artifact().sizeBytes() != size || !there.artifact().access().equals(access)) {
                throw StorageException.exists("volume " + volumeId + " exists with another size or access");
            }
            return size;
        }
        return put(volumeId, size, access, "", label);
    }

    @Override
    public synchronized long restoreSnapshot(String volumeId, String snapshotId, long capacityBytes, AccessType access,
                                             Artifact.Label label) {
        effect("restoreSnapshot");
        Artifact snapshot = require(snapshots, "snapshot", snapshotId);
        if (capacityBytes != 0 && capacityBytes < snapshot.sizeBytes()) {
            throw StorageException.outOfRange(capacityBytes + " bytes is below snapshot " + snapshotId + "'s " + snapshot.sizeBytes());
        }
        return put(volumeId, Math.max(roundUp(capacityBytes), snapshot.sizeBytes()), access, Artifact.snapshotSource(snapshotId), label);
    }

    @Override
    public synchronized long cloneVolume(String volumeId, String sourceVolumeId, long capacityBytes, AccessType access,
                                         Artifact.Label label) {
        effect("cloneVolume");
        Artifact source = require(volumes, "volume", sourceVolumeId);
        return put(volumeId, Math.max(roundUp(capacityBytes), source.sizeBytes()), access, Artifact.volumeSource(sourceVolumeId), label);
    }

    @Override
    public void deleteVolume(String volumeId) {
        writes.incrementAndGet();
        if (attached.contains(volumeId)) throw StorageException.inUse("volume " + volumeId + " is attached");
        volumes.remove(volumeId);
    }

    @Override public void syncDeletes() {}

    @Override
    public synchronized boolean ensureBlankVolume(String volumeId, long sizeBytes, AccessType access, Artifact.Label label) {
        writes.incrementAndGet();
        if (volumes.containsKey(volumeId)) return false;
        put(volumeId, sizeBytes, access, "", label);
        return true;
    }

    @Override public boolean holdsData(Artifact.Kind kind, String id) { return false; }

    @Override public boolean inUse(String volumeId) { return attached.contains(volumeId); }

    @Override
    public synchronized long expandVolume(String volumeId, long newCapacityBytes) {
        effect("expandVolume");
        Entry e = volumes.get(volumeId);
        if (e == null) throw StorageException.notFound("volume " + volumeId + " does not exist");
        long size = Math.max(e.artifact().sizeBytes(), roundUp(newCapacityBytes));
        volumes.put(volumeId, new Entry(e.artifact().withSize(size), e.mutable()));
        return size;
    }

    @Override
    public long createSnapshot(String snapshotId, String volumeId, Artifact.Label label) {
        return createGroupSnapshot(Map.of(snapshotId, volumeId), label, null).get(snapshotId);
    }

    @Override
    public synchronized Map<String, Long> createGroupSnapshot(Map<String, String> snapshotToVolume, Artifact.Label label,
                                                           FreezeHold held) {
        effect("createSnapshot");
        if (snapshotToVolume.isEmpty()) throw StorageException.invalid("no volumes to snapshot");
        Map<String, Long> sizes = new TreeMap<>();
        for (var member : new TreeMap<>(snapshotToVolume).entrySet()) {
            Artifact volume = require(volumes, "volume", member.getValue());
            Entry there = snapshots.get(member.getKey());
            if (there != null && !there.artifact().source().equals(Artifact.volumeSource(member.getValue()))) {
                throw StorageException.exists("snapshot " + member.getKey() + " exists for another volume");
            }
            snapshots.put(member.getKey(), new Entry(new Artifact(member.getKey(), Artifact.Kind.SNAPSHOT, name(),
                    volume.sizeBytes(), volume.access(), Artifact.volumeSource(member.getValue()), Instant.now()).withLabel(label), Map.of()));
            sizes.put(member.getKey(), volume.sizeBytes());
        }
        return sizes;
    }

    /** A fake of the core alone: it offers no capability, unless a test gave it one ({@link #offer}). */
    @Override
    public <C extends Capability> Optional<C> capability(Class<C> type) {
        return offered.stream().filter(type::isInstance).map(type::cast).findFirst();
    }

    private final List<Capability> offered = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** From now on the engine offers {@code capability} (a test's own node side or write fence). */
    public MemoryPool offer(Capability capability) {
        offered.add(capability);
        return this;
    }

    @Override
    public void deleteSnapshot(String snapshotId) {
        writes.incrementAndGet();
        snapshots.remove(snapshotId);
    }

    @Override
    public synchronized void modifyVolume(String volumeId, Map<String, String> mutableParameters) {
        writes.incrementAndGet();
        Entry e = volumes.get(volumeId);
        if (e == null) throw StorageException.notFound("volume " + volumeId + " does not exist");
        checkMutableParameters(mutableParameters);
        Map<String, String> merged = new LinkedHashMap<>(e.mutable());
        merged.putAll(mutableParameters);
        volumes.put(volumeId, new Entry(e.artifact(), Map.copyOf(merged)));
    }

    @Override
    public Optional<String> volumeCondition(String volumeId) {
        return volumes.containsKey(volumeId) ? Optional.empty() : Optional.of("the volume's artifact is missing");
    }

    @Override public Set<String> volumeArtifacts() { return new HashSet<>(volumes.keySet()); }

    @Override public Set<String> snapshotArtifacts() { return new HashSet<>(snapshots.keySet()); }

    @Override
    public Optional<Artifact> artifact(Artifact.Kind kind, String id) {
        return Optional.ofNullable((kind == Artifact.Kind.VOLUME ? volumes : snapshots).get(id)).map(Entry::artifact);
    }

    @Override public List<Path> removeTemporaryArtifacts() { return new ArrayList<>(); }

    @Override public void close() {}

    private long put(String volumeId, long size, AccessType access, String source, Artifact.Label label) {
        if (size > pool().allocatableBytes()) throw StorageException.noSpace(size + " bytes do not fit the pool");
        volumes.put(volumeId, new Entry(new Artifact(volumeId, Artifact.Kind.VOLUME, name(), size, access, source,
                Instant.now()).withLabel(label), Map.of()));
        return size;
    }

    private static Artifact require(Map<String, Entry> artifacts, String what, String id) {
        Entry e = artifacts.get(id);
        if (e == null) throw StorageException.notFound(what + " " + id + " does not exist");
        return e.artifact();
    }

    private void effect(String method) {
        writes.incrementAndGet();
        if (method.equals(failNext)) {
            failNext = null;
            throw StorageException.noSpace(method + " failed: no space left on the device (injected)");
        }
    }

    private static long roundUp(long bytes) {
        return Math.max(MIB, (bytes + MIB - 1) / MIB * MIB);
    }
}
