/**
 * Volumes on the controller side, and what every domain operation ({@code volume/}, {@code snapshot/},
 * {@code group/}) shares. Services hand in and get back records of {@link io.csi4j.driver.model}; nothing here
 * imports gRPC or wire types.
 *
 * <ul>
 *   <li>{@link io.csi4j.driver.volume.Volumes}: wires the jobs below once (one catalog, one engine, one
 *       {@code PoolCapacity}) and hands them out; callers name the job they use. Each job is its own class, so that
 *       one can be read whole, and uses only the jobs listed before it:
 *     <ul>
 *       <li>{@link io.csi4j.driver.volume.VolumeRules}: what a request may ask of this node (parameters, mutable
 *           parameters, topology, capabilities, idempotency by name), answered from the engine's capabilities and the
 *           config alone: no catalog, no writes. CreateVolume asks them before any row or artifact is written;
 *           ValidateVolumeCapabilities asks the same questions of an existing volume.</li>
 *       <li>{@link io.csi4j.driver.volume.VolumeReads}: one volume, pages, ListVolumes' page with status,
 *           conditions, GetCapacity.</li>
 *       <li>{@link io.csi4j.driver.volume.VolumeDeletion}: DeleteVolume and the end of every delete: commit (row
 *           gone, tombstone recorded), then effect; tombstones dropped in batches after one directory sync.</li>
 *       <li>{@link io.csi4j.driver.volume.VolumeCreation}: CreateVolume of every kind (blank, thick, clone,
 *           restore, a copy from another node, a replicated volume's primary), each by its crash protocol.</li>
 *       <li>{@link io.csi4j.driver.volume.VolumeChanges}: expand, modify, a secondary copy's new image.</li>
 *       <li>{@link io.csi4j.driver.volume.VolumePublications}: ControllerPublish/Unpublish bookkeeping.</li>
 *     </ul></li>
 *   <li>{@link io.csi4j.driver.volume.Lookup}: reading one object by a wire id, once per kind (volume, snapshot,
 *       group snapshot, volume group): parse the id, read the row, check which node owns it, NOT_FOUND. A CO's
 *       read of a snapshot goes through {@code coSnapshots}, to which a replication point is an unknown id.</li>
 *   <li>{@link io.csi4j.driver.volume.Lifecycle}: the effect and commit of intent → effect → commit, with the
 *       rollback of a failed effect (docs/design.md, "Crash protocol"), for volumes, snapshots and group snapshots. The
 *       intent (a CREATING row) is written by the caller; a blank volume has no intent (its row is the commit,
 *       the image derivable from it) and a delete is commit, then effect (a tombstone names the files).</li>
 *   <li>{@link io.csi4j.driver.volume.VolumeShape}: what a volume is (block, or a filesystem of a type), from the
 *       request checked against the engine's capabilities, to the row, the engine's access type and the stage.</li>
 *   <li>{@link io.csi4j.driver.volume.Capability}, {@link io.csi4j.driver.volume.AccessMode},
 *       {@link io.csi4j.driver.volume.CapacityRange}, {@link io.csi4j.driver.volume.NewVolume}: a request in
 *       domain terms; {@link io.csi4j.driver.volume.MutableParameters}: the keys any engine may take.</li>
 * </ul>
 */
package io.csi4j.driver.volume;
