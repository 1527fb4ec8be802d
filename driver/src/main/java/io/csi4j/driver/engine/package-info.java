/**
 * Storage engines: where volume and snapshot bytes live, behind {@link io.csi4j.driver.engine.StorageEngine}:
 * a small core ({@link io.csi4j.driver.engine.PoolStorage}: artifacts in the pool and their lifecycle, all the
 * controller's domain rules touch, so they can be tested against an engine held in memory) and capabilities an
 * engine offers or not, each a small interface found by type with {@code PoolStorage.capability(Class)}
 * ({@link io.csi4j.driver.engine.Capability}, registered in the engine's
 * {@link io.csi4j.driver.engine.Capabilities}):
 * <ul>
 *   <li>{@link io.csi4j.driver.engine.NodeStorage}: the node side, attach, stage, publish (both engines);</li>
 *   <li>{@link io.csi4j.driver.engine.Freezer}: hold volumes frozen between calls, for a group snapshot across
 *       nodes (both engines; the dir engine only refuses members published writable);</li>
 *   <li>{@link io.csi4j.driver.engine.SnapshotRanges}: allocated and changed ranges of snapshots (image);</li>
 *   <li>{@link io.csi4j.driver.engine.DataMover}: send and import volumes between nodes, replicas (image);</li>
 *   <li>{@link io.csi4j.driver.engine.InPlaceApply}: a secondary's round written into its image under a journal,
 *       and the start-up replay of a journal a crash left (image, reflink pools);</li>
 *   <li>{@link io.csi4j.driver.engine.SpaceReclaimer}: give free space back, tell what a volume takes (image);</li>
 *   <li>{@link io.csi4j.driver.engine.WriteFence}: stop every write to a volume's mounts at once, for a fenced
 *       replica (image: its filesystem remounted read-only, or shut down; a block volume's loop device read-only, BLKROSET);</li>
 *   <li>{@link io.csi4j.driver.engine.Preallocation}: thick volumes, allocated and written up front (image; the
 *       dir engine's absence of it is why {@code csi4j.io/provisioning: thick} is INVALID_ARGUMENT there).</li>
 * </ul>
 * A caller that finds a capability absent raises the error it gives for an engine that cannot. A new capability
 * (replication, encryption, preallocation modes) is a new interface extending {@code Capability}, a class
 * implementing it in the engine's package, and one registration line in that engine: no shared interface changes,
 * and the in-memory fake of the core ({@code MemoryPool}, in the tests) does not change either.
 *
 * <p>{@link io.csi4j.driver.engine.Pool} is {@code <data-dir>/pool}: a plain directory, or an XFS image
 * ({@code <data-dir>/pool.img}, reflink on) that the plugin mounts there and that outlives it.
 * Inside a pool ({@link io.csi4j.driver.engine.PoolLayout}: paths and sidecars; its
 * per-id locks against a concurrent delete are {@link io.csi4j.driver.engine.IdLocks}):
 * <pre>
 *   volumes/&lt;id&gt;.img | .dir   the volume (image engine: sparse file; dir engine: directory)
 *   volumes/&lt;id&gt;.meta         its sidecar: one JSON object ({@link io.csi4j.driver.engine.Artifact})
 *   snapshots/&lt;id&gt;.img | .dir, snapshots/&lt;id&gt;.meta
 *   .tmp/                      work in progress, renamed into place when complete; swept at start-up
 * </pre>
 * A pool image is thin: its blocks are taken from the filesystem beneath when first written, and other writers may
 * take them first. {@link io.csi4j.driver.engine.PoolBacking} reads that filesystem and
 * {@link io.csi4j.driver.engine.BackingSpace} holds the rules: capacity counts only what it can still hold less a
 * {@link io.csi4j.driver.engine.PoolReserve}, and the pool is overcommitted (every volume abnormal) when it has less
 * free than the image could still claim. {@link io.csi4j.driver.engine.PoolChoice} sizes an auto image the same way.
 *
 * <p>The sidecar is written (temp + fsync + rename) before the artifact is renamed into place, so a
 * crash leaves nothing, a sidecar alone (swept), or a complete artifact with its description.
 *
 * <p>Two artifacts are made durable by the catalog instead (docs/design.md, "Crash protocol"): a blank volume
 * is derivable from its row, so its sidecar and sparse image are made under their final names without a
 * sync and the row's commit is the create's one sync (a power cut may lose them: the reconciler re-makes
 * them from the row; stage and publish sync them before anything is written into them). A delete unlinks
 * without a sync after the catalog committed the row's delete with a tombstone; one sync of the volumes
 * directory per batch of deletes lets the tombstones go. An artifact that no row owns is removed at
 * start-up when a tombstone names it or when it holds nothing (a blank create cut short); any other is
 * only reported.
 *
 * <p>What both engines do alike lives once: {@link io.csi4j.driver.engine.ArtifactStore} (listing, sidecars,
 * labels, existence checks as the engine's entry type, deletes, the start-up sweep) and the skeleton
 * {@link io.csi4j.driver.engine.PoolEngine} (re-making a blank volume from its row, idempotent re-creation,
 * the restore/clone prologue, undoing a failed group cut, a source deleted mid-read as NOT_FOUND). An engine
 * adds how it makes, sizes, cuts and attaches its artifacts. {@link io.csi4j.driver.engine.FreezeHold} keeps
 * members frozen between calls for a group snapshot that spans nodes; an unstage or unpublish of a member waits
 * for its thaw as for a cut (30 s at most, then BUSY).
 *
 * <p>{@code engine.open.Engines#open} is the one way an engine of an {@link io.csi4j.driver.engine.EngineKind}
 * is opened: on the pool of a {@link io.csi4j.driver.storage.DataDir}, which names what lives in the data
 * directory. It lives in a package of its own, above this one and {@code engine.image}, so that the import graph
 * has no cycle.
 *
 * <p>{@link io.csi4j.driver.engine.EngineCapabilities} says what volumes an engine makes (block or not, the
 * filesystems, the mutable parameters it applies); with {@code PoolStorage.blankSize} (the smallest volume)
 * and {@code PoolStorage.checkMutableParameters} (their ranges, and what the pool allows) the domain refuses a
 * request before any row or artifact is written.
 *
 * <p>The image engine ({@code engine.image}, a package split by job) attaches images through loop devices, its
 * node side there too ({@code engine.image.LoopStaging} and its helpers). Both engines' node sides share
 * {@link io.csi4j.driver.engine.Binds} (bind mounts, our mounts recognised in the kernel's table) and
 * {@link io.csi4j.driver.engine.MountOptions}, public for that. {@link io.csi4j.driver.engine.DirEngine}
 * bind-mounts directories ({@link io.csi4j.driver.engine.DirNode}; its freeze hold is
 * {@link io.csi4j.driver.engine.DirFreezer}); where the pool's filesystem enforces project quotas each directory
 * has a project id and a hard limit of its capacity ({@link io.csi4j.driver.engine.DirQuotas}, the id rule in
 * {@link io.csi4j.driver.engine.ProjectIds}; the id is kept on the directory's inode and read back at open). Node operations read the kernel's mount table and loop devices every time, so they
 * are idempotent across plugin restarts.
 */
package io.csi4j.driver.engine;
