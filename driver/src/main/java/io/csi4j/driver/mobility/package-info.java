/**
 * Copies of volumes between nodes, in domain terms; the cluster's agent link carries them ({@code cluster/}), nothing
 * here knows gRPC or the wire types.
 *
 * <ul>
 *   <li>{@link io.csi4j.driver.mobility.SourceSender}: the sending side, one snapshot or volume of this node as
 *       {@link io.csi4j.driver.mobility.SourcePart}s (a header, checksummed ranges, a trailer that counts them), read
 *       ahead by {@link io.csi4j.driver.mobility.ChunkReader}, against the base {@link io.csi4j.driver.mobility.DeltaBase}
 *       picks (an id the receiver offers and this node holds: one of its snapshots, or its replica of one); the ranges
 *       are found in one walk of the extent maps, held by {@link io.csi4j.driver.mobility.HeldRanges} so their total is
 *       known before the first is sent.</li>
 *   <li>{@link io.csi4j.driver.mobility.SendLoop}: the one loop both senders put ranges on the wire with (framing,
 *       CRC32C, the bandwidth limit, progress, a receiver gone); a sender only decides what each piece read becomes
 *       (data, zeros to punch, nothing).</li>
 *   <li>{@link io.csi4j.driver.mobility.ChecksumSender}: the sending side when there is no common base but the receiver
 *       holds an old point of the volume: the receiver's {@link io.csi4j.driver.mobility.ChunkHashes} (SHA-256 of its
 *       chunks), and {@link io.csi4j.driver.mobility.HashDelta}'s rules of what differs (a resync by checksums). A fenced
 *       copy that follows holds no point: it hashes a still copy of its own image instead
 *       ({@code engine/DataMover.stillImage}), the base of its build, never a point.</li>
 *   <li>{@link io.csi4j.driver.mobility.VolumeImports}: the receiving side, CreateVolume from a
 *       {@link io.csi4j.driver.mobility.SourceNode} (the node that holds the source; {@code cluster/PeerSource}
 *       implements it): one copy per name on a thread of its own, each range checked and written by
 *       {@link io.csi4j.driver.mobility.RangeWriter}, rolled back unless complete. How many ranges travel per message is
 *       the edge's business ({@code cluster/RangeBatches}): here every range is a part of its own either way.</li>
 *   <li>{@link io.csi4j.driver.mobility.Bandwidth}, {@link io.csi4j.driver.mobility.Copies}: the limit on what copies
 *       move, and their progress for status and metrics.</li>
 * </ul>
 * Failures are {@link io.csi4j.driver.domain.DomainException}s; a source node's own failure comes back through
 * {@code SourceNode} as the edge tells it and is passed on unchanged.
 */
package io.csi4j.driver.mobility;
