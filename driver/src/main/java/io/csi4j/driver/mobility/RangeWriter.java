package io.csi4j.driver.mobility;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.ImageImport;

/**
 * The receiving side's rule for each range of a copy, in the order they arrive (one per message or several to one,
 * the same): inside the source, its data as long as it says and matching its CRC32C, else the copy fails before
 * anything of it is written; never more bytes, data and zeros, than the header announced (what the receiver sized its
 * journal or its promise by: a peer that sends more fails the copy before the range past the count is written); then
 * written, or punched when it reads as zeros, within the bandwidth limit; counted for the trailer's check. Nothing is
 * synced here: the caller's commit or image switch does that once every range is in.
 */
public final class RangeWriter {
    private final ImageImport target;
    private final long sourceBytes;
    private final long announced;
    private final String what;
    private final String sourceNodeId;
    private final Bandwidth bandwidth;
    private final Copies.Copy progress;
    private long ranges;
    private long dataBytes;
    private long covered;

    /** The ranges that follow {@code header}, of the copy messages call {@code what} (e.g. "replica of vol-1"). */
    public RangeWriter(ImageImport target, SourcePart.Header header, String what, String sourceNodeId, Bandwidth bandwidth,
                       Copies.Copy progress) {
        this.target = target;
        this.sourceBytes = Math.max(header.sizeBytes(), 0);
        this.announced = header.bytesToSend();
        this.what = what;
        this.sourceNodeId = sourceNodeId;
        this.bandwidth = bandwidth;
        this.progress = progress;
    }

    /**
     * Checks and writes one range; FAILED outside the source or past the header's count (the peer broke the protocol),
     * ABORTED when its length or CRC32C does not match.
     */
    public void write(SourcePart.Range r) {
        if (r.offset() < 0 || r.length() <= 0 || r.offset() + r.length() > sourceBytes) {
            throw DomainException.failed("node '" + sourceNodeId + "' sent a range outside the source: " + r.offset() + "+" + r.length());
        }
        if (r.length() > announced - covered) {
            throw DomainException.failed("node '" + sourceNodeId + "' sent more than its header announced for " + what + ": "
                    + covered + " bytes in " + ranges + " ranges, then " + r.length() + " more at offset " + r.offset()
                    + ", past the " + announced + " bytes announced; nothing of it was kept");
        }
        bandwidth.take(r.length());
        if (r.zero()) {
            target.zero(r.offset(), r.length());
        } else {
            if (r.data().remaining() != r.length()) throw mismatch(r, "length " + r.data().remaining());
            if (SourceSender.crc(r.data().duplicate()) != r.crc32c()) throw mismatch(r, "CRC32C");
            long writing = System.nanoTime();
            target.write(r.data(), r.offset());
            progress.writingNanos += System.nanoTime() - writing;
            dataBytes += r.length();
        }
        ranges++;
        covered += r.length();
        progress.moved(r.length());
    }

    /** Ranges written so far. */
    public long ranges() { return ranges; }

    /** Data bytes written so far (zeros punched not counted). */
    public long dataBytes() { return dataBytes; }

    private DomainException mismatch(SourcePart.Range r, String what) {
        return DomainException.aborted("the copy from node '" + sourceNodeId + "' failed its check at offset "
                + r.offset() + " (" + what + " does not match); nothing was kept, retry");
    }
}
