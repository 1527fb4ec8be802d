/**
 * Volumes on the controller side, and what every domain operation ({@code volume/}, {@code snapshot/},
 * {@code group/}) shares. Services hand in and get back records of {@link io.csi4j.driver.model}; nothing here
 * imports gRPC or wire types.
 *
 * <ul>
 *   <li>{@link io.csi4j.driver.volume.Volumes}: CreateVolume (blank, clone, restore, a copy from another node),
 *       DeleteVolume, expand, modify, publish bookkeeping, listings with their status, ValidateVolumeCapabilities'
 *       rules. What a request asks is checked against the engine's capabilities before any row or artifact is
 *       written.</li>
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
