package io.csi4j.driver.mobility;

import java.nio.ByteBuffer;

/** One message of a copy between nodes, in this order: a header, the ranges, a trailer that counts them. */
public sealed interface SourcePart {

    /** What follows: the source's size, its volume, the base the ranges change ("" for none), the bytes it will send. */
    record Header(long sizeBytes, String sourceVolumeId, String baseSnapshotId, long bytesToSend) implements SourcePart {}

    /**
     * {@code length} bytes at {@code offset}: {@code data} (its remaining bytes) with their CRC32C, or, when {@code zero},
     * no data and the CRC32C of {@code length} zero bytes: the range reads as zeros.
     */
    record Range(long offset, long length, ByteBuffer data, boolean zero, int crc32c) implements SourcePart {}

    /** The end: how many ranges and data bytes were sent, for the receiver to check it has them all. */
    record Trailer(long ranges, long dataBytes) implements SourcePart {}
}
