/**
 * The image engine: volumes are sparse image files in the pool, attached on the node through loop devices;
 * snapshots, clones and restores are reflinks where the pool can, else sparse-aware copies.
 *
 * <p>Split by job, each class small enough to hold in one's head:
 * <ul>
 *   <li>{@link io.csi4j.driver.engine.image.ImageEngine}: the core ({@code PoolStorage}): create, restore, clone,
 *       snapshot (single and group), modify, conditions, and the capabilities it registers.</li>
 *   <li>{@code ImageCapacity}: thin accounting (what is promised, what the overcommitted pool can still promise).</li>
 *   <li>{@code ImageCopies}: images made of other images' content (a restore, a clone, a group's snapshots), cut
 *       under a freeze and revealed after the thaw; {@code ImageVolumes}: growing and removing images
 *       ({@code UnattachedLooks}: a delete's look at the loop devices, remembered from its in-use check while no
 *       attach can have come since).</li>
 *   <li>{@code ImageConditions}: whether a volume (or a page of them) is healthy.</li>
 *   <li>Capabilities, one class each: {@code ImageNode} ({@code NodeStorage}: stage, publish ... through
 *       {@code LoopStaging}; an unstage or unpublish waits for a cut or a freeze hold of its volume, which holds the
 *       mount open; a stage attaches under the volume's lock, which an import's commit takes to look and rename),
 *       {@code ImageFreezer} ({@code Freezer}; also the freeze around every cut, logged with how long it held writes and
 *       which way it cut, and the thaw at start-up), {@code IncrementalCut} ({@code PointCutter}: a replication point
 *       as its secondary's base plus the ranges that changed, when its rule lets it; the ranges kept in {@code CutDeltas}
 *       for the sender's delta of the same two points), {@code ImageChangeCheck} ({@code ChangeCheck}: an unattached
 *       volume whose extents are still its held point's, so a round keeps that point), {@code ImageBlockMaps} ({@code SnapshotRanges}, with {@code AllocatedRanges},
 *       {@code SharedExtentDelta}, {@code DataComparisonDelta}), {@code ImageMover} ({@code DataMover}, with
 *       {@code FileSourceImage} and {@code FileImageImport}), {@code InPlaceRounds} ({@code InPlaceApply}: a
 *       secondary's round written into its image, which is its held replica's inode, after the ranges are durable in a
 *       {@code RoundJournal} in {@code journals/}; the start-up replay that finishes or drops a journal a crash left;
 *       docs/inplace-rounds.md section 1), {@code ImageReclaimer} ({@code SpaceReclaimer}),
 *       {@code ImagePreallocation} ({@code Preallocation}: thick images through {@code os/ZeroFill}),
 *       {@code ImageWriteFence} ({@code WriteFence}: a fenced replica's filesystem read-only through {@code os/WriteStop}).</li>
 *   <li>The node side, from the kernel's mount table and loop devices every time: {@code LoopStaging} (attach,
 *       stage a block volume, bind-publish, unpublish, unstage, detach), {@code LoopFilesystems} (a filesystem
 *       volume: format when blank, between the durable marks of {@code FormatIntent} so that a format cut short by
 *       a power cut is redone, not mounted; grow offline, mount; grow online at NodeExpandVolume, with the image fsynced and
 *       a grown XFS frozen before the answer; FITRIM), {@code LoopStats} (usage, and what is abnormal).</li>
 *   <li>{@code ImageFormat}: what the pool side and the node side both know of an image (its filesystems, their
 *       minimum sizes, the MiB granularity, the default read-ahead).</li>
 *   <li>{@code ImagePool}: what they all work on (pool, layout, per-id locks, artifact store) and the few helpers
 *       they share (where an image is, a reflink-or-copy, sizing a file, {@code ownImage}: a secondary's image and
 *       its replica are one inode after a round, split by a reflink before anything writes the image).</li>
 * </ul>
 * A new capability of this engine is a new class here and one {@code .add(...)} line in {@code ImageEngine}.
 * This package depends on {@code engine} (the core, the layout, the skeleton {@code PoolEngine}), never the other
 * way round; {@code engine.open.Engines} opens it.
 */
package io.csi4j.driver.engine.image;
