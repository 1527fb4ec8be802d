/**
 * Replicated volumes (issue 28, {@code docs/replication.md}): what a StorageClass asks
 * ({@link io.csi4j.driver.replication.ReplicationParameters}). The replica set itself is named by its id
 * ({@code id/ReplicatedVolumeId}). Domain code only: no gRPC, no wire types.
 */
package io.csi4j.driver.replication;
