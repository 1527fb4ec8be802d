package io.csi4j.driver.mobility;

import io.csi4j.driver.engine.RangeCursor;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The sender's rules of a resync by checksums (docs/replication.md, "Resync by checksums"): which chunks of the new
 * point it reads, and which of them it sends. The receiver builds the new image from its old one (a reflink, cut or
 * grown to the new size) and applies what is sent, so after it every chunk must read as the new point's:
 * <ul>
 *   <li>a chunk the receiver did not list reads as zeros there: sent when the new point has data in it, else skipped;</li>
 *   <li>a listed chunk that is zeros in the new point: sent as zeros (a hole to punch), whatever the receiver holds;</li>
 *   <li>a listed chunk with data: skipped when the SHA-256 of the new point's bytes of that chunk (up to the new size)
 *       equals the receiver's (of its bytes up to its old size: a last chunk cut at another size differs), else sent.</li>
 * </ul>
 * Pure: no I/O, so the rules are a table test.
 */
final class HashDelta {
    private HashDelta() {}

    /** What is done with one chunk. */
    enum Action { SKIP, DATA, ZERO }

    /** One run of chunks sent alike: {@code [offset, offset + length)} as data or as zeros. */
    record Run(long offset, int length, Action action) {}

    /** The rule for one chunk; {@code receiverDigest} null when not listed. */
    static Action decide(boolean zero, byte[] receiverDigest, byte[] senderDigest) {
        if (receiverDigest == null) return zero ? Action.SKIP : Action.DATA;
        if (zero) return Action.ZERO;
        return MessageDigest.isEqual(receiverDigest, senderDigest) ? Action.SKIP : Action.DATA;
    }

    /**
     * The runs to send of one piece read from the new point: {@code length} bytes of {@code data} at {@code offset}, which
     * starts on a chunk boundary and holds whole chunks but at the image's end. Adjacent chunks with the same action are
     * joined; skipped chunks send nothing.
     */
    static List<Run> plan(ChunkHashes hashes, long offset, byte[] data, int length) {
        int size = hashes.chunkBytes();
        if (offset % size != 0) throw new IllegalArgumentException("piece at " + offset + " is not on a chunk of " + size);
        List<Run> runs = new ArrayList<>();
        MessageDigest sha = ChunkHashes.sha256();
        for (int at = 0; at < length; at += size) {
            int n = Math.min(size, length - at);
            boolean zero = Arrays.mismatch(data, at, at + n, ZEROS, 0, n) < 0;
            byte[] theirs = hashes.digest((offset + at) / size);
            byte[] ours = null;
            if (theirs != null && !zero) {
                sha.update(data, at, n);
                ours = sha.digest();
            }
            Action action = decide(zero, theirs, ours);
            if (action == Action.SKIP) continue;
            Run last = runs.isEmpty() ? null : runs.getLast();
            if (last != null && last.action() == action && last.offset() + last.length() == offset + at) {
                runs.set(runs.size() - 1, new Run(last.offset(), last.length() + n, action));
            } else {
                runs.add(new Run(offset + at, n, action));
            }
        }
        return runs;
    }

    /**
     * The runs to send of one piece {@link ChunkReader} read: its bytes as {@link #plan(ChunkHashes, long, byte[], int)}
     * plans them, or, for a piece read as its digest only (a chunk bigger than a stream part), that one chunk by its
     * digest: sent whole as data (the sender reads it again, in parts) or as zeros, or nothing.
     */
    static List<Run> plan(ChunkHashes hashes, ChunkReader.Chunk piece) {
        if (piece.data() != null) return plan(hashes, piece.offset(), piece.data(), piece.length());
        int size = hashes.chunkBytes();
        if (piece.offset() % size != 0 || piece.length() > size) {
            throw new IllegalArgumentException("piece " + piece.offset() + "+" + piece.length() + " is not one chunk of " + size);
        }
        Action action = decide(piece.zero(), hashes.digest(piece.offset() / size), piece.digest());
        return action == Action.SKIP ? List.of() : List.of(new Run(piece.offset(), piece.length(), action));
    }

    /** Pieces with their bytes are at most one stream part. */
    private static final byte[] ZEROS = new byte[SourceSender.CHUNK];

    /**
     * The ranges the sender reads, ascending and joined, computed as they are pulled (never the whole map in memory):
     * every chunk its {@code allocated} ranges touch, and every chunk the receiver listed, within {@code sizeBytes} (the
     * new point's size); each starts on a chunk boundary. A chunk in neither is a hole on the sender and zeros on the
     * receiver: nothing to do. Closing it closes {@code allocated}.
     */
    static RangeCursor candidates(RangeCursor allocated, long sizeBytes, ChunkHashes hashes) {
        return new Candidates(allocated, sizeBytes, hashes);
    }

    private static final class Candidates implements RangeCursor {
        private final RangeCursor allocated;
        private final long sizeBytes;
        private final long size;
        private final long chunks;
        private final long[] listed;
        private int next;
        /** The allocated range read ahead, in chunks [first, end); null when none is read ahead. */
        private long[] ahead;
        private boolean allocatedDone;
        /** The run being joined, in chunks; null when none. */
        private long[] pending;

        Candidates(RangeCursor allocated, long sizeBytes, ChunkHashes hashes) {
            this.allocated = allocated;
            this.sizeBytes = sizeBytes;
            this.size = hashes.chunkBytes();
            this.chunks = Math.ceilDiv(sizeBytes, size);
            this.listed = hashes.indexes();
        }

        @Override
        public Range next() {
            while (true) {
                while (ahead == null && !allocatedDone) {
                    Range r = allocated.next();
                    if (r == null) {
                        allocatedDone = true;
                    } else {
                        long first = r.offset() / size, end = Math.min(chunks, Math.ceilDiv(r.end(), size));
                        if (first < end) ahead = new long[] {first, end};
                    }
                }
                long[] item;
                boolean fromList = next < listed.length && listed[next] < chunks && (ahead == null || listed[next] < ahead[0]);
                if (fromList) {
                    item = new long[] {listed[next], listed[next] + 1};
                    next++;
                } else if (ahead != null) {
                    item = ahead;
                    ahead = null;
                } else {
                    long[] last = pending;
                    pending = null;
                    return last == null ? null : range(last);
                }
                if (pending == null) {
                    pending = item;
                } else if (item[0] <= pending[1]) {
                    pending[1] = Math.max(pending[1], item[1]);
                } else {
                    long[] done = pending;
                    pending = item;
                    return range(done);
                }
            }
        }

        private Range range(long[] run) {
            return new Range(run[0] * size, Math.min(run[1] * size, sizeBytes) - run[0] * size);
        }

        @Override public long capacityBytes() { return sizeBytes; }
        @Override public Method method() { return Method.DATA_COMPARISON; }
        @Override public void close() { allocated.close(); }
    }
}
