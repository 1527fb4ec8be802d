/**
 * The driver's domain model: the records the catalog maps its rows into and the domain operations
 * ({@code volume/}, {@code snapshot/}, {@code group/}) hand to the services, which map them to the wire and
 * back, nothing else. Nothing here imports the catalog, the engines, gRPC or generated wire types.
 *
 * <ul>
 *   <li>{@link io.csi4j.driver.model.VolumeRecord}, {@link io.csi4j.driver.model.SnapshotRecord},
 *       {@link io.csi4j.driver.model.GroupSnapshotRecord}, {@link io.csi4j.driver.model.VolumeGroupRecord},
 *       {@link io.csi4j.driver.model.PublicationRecord}: one object each, as it is stored.</li>
 *   <li>{@link io.csi4j.driver.model.VolumeListing}: the columns a ListVolumes page shows.</li>
 *   <li>{@link io.csi4j.driver.model.State}: the intent/commit life cycle every object goes through.</li>
 *   <li>{@link io.csi4j.driver.model.VolumeKind}, {@link io.csi4j.driver.model.ContentSource}: what a volume
 *       is and where its content came from.</li>
 *   <li>{@link io.csi4j.driver.model.Page}, {@link io.csi4j.driver.model.SnapshotFilter}: keyset pages and the
 *       ListSnapshots filter.</li>
 * </ul>
 */
package io.csi4j.driver.model;
