package io.csi4j.driver.engine.image;

import static io.csi4j.driver.engine.image.ImageFormat.fileSize;

import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.Artifact;
import io.csi4j.driver.engine.FreezeHold;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.PoolLayout.EntryType;
import io.csi4j.driver.storage.StorageException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Images made of other images' content: a volume restored from a snapshot or cloned from a volume, and the snapshots
 * of a group of volumes cut at one instant. Each is reflinked (or copied) into .tmp while the source filesystems are
 * frozen (together, or under a hold taken earlier), then revealed under its final name after the thaw.
 */
final class ImageCopies {
    private final ImagePool images;
    private final ImageCapacity capacity;
    private final ImageFreezer freezer;
    private final CutDeltas deltas;

    ImageCopies(ImagePool images, ImageCapacity capacity, ImageFreezer freezer, CutDeltas deltas) {
        this.deltas = deltas;
        this.images = images;
        this.capacity = capacity;
        this.freezer = freezer;
    }

    /**
     * A new volume of {@code size} bytes from {@code source}'s content ({@code sourceSize} bytes), cut while
     * {@code freeze}'s filesystems are frozen; its size promised to the pool first (NO_SPACE).
     */
    long volume(String volumeId, Path source, long sourceSize, long size, AccessType access, String sourceRef,
                List<String> freeze, Artifact.Label label) {
        PoolLayout layout = images.layout();
        capacity.reserve(size, "volume " + volumeId);
        boolean made = false;
        Path temp = layout.temporary(volumeId, ".img");
        try {
            freezer.cut(freeze, () -> images.cloneOrCopy(source, temp));
            if (size > sourceSize) ImagePool.sized(temp, size);
            layout.reveal(List.of(new PoolLayout.Finished(
                    new Artifact(volumeId, Artifact.Kind.VOLUME, ImagePool.NAME, size, access, sourceRef, Instant.now())
                            .withLabel(label), temp)));
            made = true;
        } finally {
            capacity.settle(size, made ? size : 0);
            PoolLayout.deleteQuietly(temp);
        }
        return size;
    }

    /** Snapshots of {@code members} that exist already; EXISTS if one exists of another volume. */
    Map<String, Long> completed(Map<String, String> members) {
        PoolLayout layout = images.layout();
        Map<String, Long> done = new TreeMap<>();
        members.forEach((snapshotId, volumeId) -> {
            if (!layout.exists(Artifact.Kind.SNAPSHOT, snapshotId, EntryType.FILE)) return;
            String source = layout.readSidecar(Artifact.Kind.SNAPSHOT, snapshotId).map(Artifact::source).orElse("");
            if (!source.equals(Artifact.volumeSource(volumeId))) {
                throw StorageException.exists("snapshot " + snapshotId + " exists of " + source + ", not of volume " + volumeId);
            }
            done.put(snapshotId, fileSize(images.snapshotImage(snapshotId)));
        });
        return done;
    }

    /** Cuts every member, frozen together; on failure the caller removes what was revealed. Returns snapshot id -> size. */
    Map<String, Long> snapshots(Map<String, String> members, Artifact.Label label, FreezeHold held) {
        return snapshots(members, label, held, Map.of());
    }

    /**
     * As {@link #snapshots(Map, Artifact.Label, FreezeHold)}; a member with a base in {@code bases} (snapshot id -> the
     * snapshot its replication secondary holds) is cut as that base plus what changed when {@link IncrementalCut}'s rule
     * lets it (never under a hold taken earlier).
     */
    Map<String, Long> snapshots(Map<String, String> members, Artifact.Label label, FreezeHold held, Map<String, String> bases) {
        PoolLayout layout = images.layout();
        Map<String, Path> temps = new LinkedHashMap<>();
        Map<String, Long> sizes = new TreeMap<>();
        List<PoolLayout.Finished> finished = new ArrayList<>();
        Map<String, IncrementalCut> cutsMade = new LinkedHashMap<>();
        try {
            members.forEach((snapshotId, volumeId) -> {
                long size = fileSize(images.image(volumeId));
                AccessType access = layout.readSidecar(Artifact.Kind.VOLUME, volumeId).map(Artifact::access)
                        .orElse(AccessType.mount(""));
                Path temp = layout.temporary(snapshotId, ".img");
                temps.put(snapshotId, temp);
                finished.add(new PoolLayout.Finished(new Artifact(snapshotId, Artifact.Kind.SNAPSHOT, ImagePool.NAME, size, access,
                        Artifact.volumeSource(volumeId), Instant.now()).withLabel(label), temp));
                sizes.put(snapshotId, size);
            });
            if (held == null) {
                Map<String, IncrementalCut> cuts = new LinkedHashMap<>();
                members.forEach((snapshotId, volumeId) -> cuts.put(snapshotId,
                        IncrementalCut.prepare(images, volumeId, bases.getOrDefault(snapshotId, ""), temps.get(snapshotId))));
                cutsMade.putAll(cuts);
                freezer.cut(List.copyOf(members.values()), frozenWhole -> {
                    List<String> how = new ArrayList<>();
                    members.forEach((snapshotId, volumeId) -> how.add(cuts.get(snapshotId).cut(frozenWhole.contains(volumeId),
                            () -> images.cloneOrCopy(images.image(volumeId), temps.get(snapshotId)))));
                    return String.join("; ", how);
                });
            } else {
                held.whileFrozen(members.values(), () -> members.forEach((snapshotId, volumeId) ->
                        images.cloneOrCopy(images.image(volumeId), temps.get(snapshotId))));
            }
            layout.reveal(finished);  // after the thaw: syncing is no reason to keep a workload frozen
            // what an incremental cut found changed, for the sender's delta of the same two points (once they are durable)
            cutsMade.forEach((snapshotId, cut) -> cut.delta(snapshotId, sizes.get(snapshotId)).ifPresentOrElse(
                    d -> deltas.remember(members.get(snapshotId), d), () -> deltas.forget(members.get(snapshotId))));
            return sizes;
        } finally {
            temps.values().forEach(PoolLayout::deleteQuietly);
        }
    }
}
