package io.csi4j.driver.mobility;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.ImageImport;

/**
 * The receiving side's rule for each range of a copy, in the order they arrive (one per message or several to one,
 * the same): inside the source, its data as long as it says and matching its CRC32C, else the copy fails before
 * anything of it is written; then written, or punched when it reads as zeros, within the bandwidth limit; counted for
 * the trailer's check. Nothing is synced here: the caller's commit or image switch does that once every range is in.
 */
public final class RangeWriter {
    private final ImageImport target;
    private final long sourceBytes;
    private final String sourceNodeId;
    private final Bandwidth bandwidth;
    private final Copies.Copy progress;
    private long ranges;
    private long dataBytes;

    public RangeWriter(ImageImport target, long sourceBytes, String sourceNodeId, Bandwidth bandwidth, Copies.Copy progress) {
        this.target = target;
        this.sourceBytes = Math.max(sourceBytes, 0);
        this.sourceNodeId = sourceNodeId;
        this.bandwidth = bandwidth;
        this.progress = progress;
    }

    /** Checks and writes one range; FAILED outside the source, ABORTED when its length or CRC32C does not match. */
    public void write(SourcePart.Range r) {
        if (r.offset() < 0 || r.length() <= 0 || r.offset() + r.length() > sourceBytes) {
            throw DomainException.failed("node '" + sourceNodeId + "' sent a range outside the source: " + r.offset() + "+" + r.length());
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
