package io.csi4j.driver.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.BlockMetadata;
import io.csi4j.proto.csi.BlockMetadataType;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataAllocatedResponse;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.GetMetadataDeltaResponse;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/** Byte ranges as half-open intervals, and the SnapshotMetadata streams read into them with every per-message rule checked. */
record Ranges(long capacity, List<long[]> list) {

    static final long BLOCK = 4096;

    /** Ranges sorted and joined where they touch or overlap. */
    static List<long[]> normalize(List<long[]> ranges) {
        List<long[]> sorted = new ArrayList<>(ranges.stream().map(long[]::clone).toList());
        sorted.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> out = new ArrayList<>();
        for (long[] r : sorted) {
            if (!out.isEmpty() && out.getLast()[1] >= r[0]) out.getLast()[1] = Math.max(out.getLast()[1], r[1]);
            else out.add(r);
        }
        return out;
    }

    /** [offset, offset + length) widened to whole blocks. */
    static long[] blocks(long offset, long length) {
        return new long[] {Math.floorDiv(offset, BLOCK) * BLOCK, Math.ceilDiv(offset + length, BLOCK) * BLOCK};
    }

    static String show(List<long[]> ranges) {
        return ranges.stream().map(r -> "[" + r[0] + "," + r[1] + ")").toList().toString();
    }

    static Ranges allocated(SnapshotMetadataGrpc.SnapshotMetadataBlockingStub stub, String snapshotId, long from, int max) {
        Iterator<GetMetadataAllocatedResponse> it = stub.getMetadataAllocated(GetMetadataAllocatedRequest.newBuilder()
                .setSnapshotId(snapshotId).setStartingOffset(from).setMaxResults(max).build());
        List<Message> messages = new ArrayList<>();
        it.forEachRemaining(m -> messages.add(new Message(m.getBlockMetadataType(), m.getVolumeCapacityBytes(), m.getBlockMetadataList())));
        return check(messages, from, max);
    }

    static Ranges delta(SnapshotMetadataGrpc.SnapshotMetadataBlockingStub stub, String base, String target, long from, int max) {
        Iterator<GetMetadataDeltaResponse> it = stub.getMetadataDelta(GetMetadataDeltaRequest.newBuilder()
                .setBaseSnapshotId(base).setTargetSnapshotId(target).setStartingOffset(from).setMaxResults(max).build());
        List<Message> messages = new ArrayList<>();
        it.forEachRemaining(m -> messages.add(new Message(m.getBlockMetadataType(), m.getVolumeCapacityBytes(), m.getBlockMetadataList())));
        return check(messages, from, max);
    }

    private record Message(BlockMetadataType type, long capacity, List<BlockMetadata> ranges) {}

    /** The spec's rules for one stream: one type and capacity, at most max per message, ascending, no overlap, past from. */
    private static Ranges check(List<Message> messages, long from, int max) {
        assertTrue(!messages.isEmpty(), "at least one message says the capacity");
        long capacity = messages.getFirst().capacity();
        List<long[]> out = new ArrayList<>();
        long previousEnd = -1;
        for (Message m : messages) {
            assertEquals(BlockMetadataType.VARIABLE_LENGTH, m.type());
            assertEquals(capacity, m.capacity(), "capacity is the same in every message");
            if (max > 0) assertTrue(m.ranges().size() <= max, "at most max_results ranges in a message: " + m.ranges().size());
            for (BlockMetadata b : m.ranges()) {
                assertTrue(b.getSizeBytes() > 0, "size_bytes > 0");
                assertTrue(b.getByteOffset() >= previousEnd, "ascending, not overlapping: " + b.getByteOffset() + " after " + previousEnd);
                if (out.isEmpty()) assertTrue(from < b.getByteOffset() + b.getSizeBytes(), "the first range ends after starting_offset");
                assertTrue(b.getByteOffset() + b.getSizeBytes() <= capacity, "inside the volume");
                previousEnd = b.getByteOffset() + b.getSizeBytes();
                out.add(new long[] {b.getByteOffset(), previousEnd});
            }
        }
        return new Ranges(capacity, out);
    }

    /** Writes {@code data} at {@code offset} of a file or device and forces it out. */
    static void write(Path path, long offset, byte[] data) {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.wrap(data);
            while (buffer.hasRemaining()) ch.write(buffer, offset + buffer.position());
            ch.force(true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
