package io.csi4j.driver.cluster;

import io.csi4j.driver.mobility.SourcePart;
import io.csi4j.driver.mobility.SourceSender;
import io.csi4j.proto.cluster.DataRange;
import io.csi4j.proto.cluster.SourceChunk;
import java.util.ArrayList;
import java.util.List;

/**
 * The sending edge of ReadSource: a copy's parts as messages, ranges several to a message when the reader reads them
 * (ReadSourceRequest.range_batch_bytes): each message costs the same framing, TLS write, hand-off to the transport and
 * wake-up of the reader whatever it carries, so a round of many small ranges pays it once per budget of data instead
 * of once per range. A reader that did not ask (an older one) gets one message per part, as ever. The ranges, their
 * order, their CRC32C and the trailer's counts are the same either way; a range's bytes are copied into the message
 * being gathered, since the sender reuses its buffer once a part is taken.
 */
final class RangeBatches implements SourceSender.Sink {
    /** Ranges in one message at most: zeros carry no data, and a message of them must stay small all the same. */
    static final int MAX_RANGES = 1024;

    /** Where the messages go: blocks while the reader cannot take more; false once it went away. */
    interface Out {
        boolean send(SourceChunk chunk);
    }

    private final Out out;
    private final long budget;
    private final List<DataRange> gathered = new ArrayList<>();
    private long gatheredBytes;

    /** Messages of at most {@code budgetBytes} of data (capped at {@link CopyWire#BATCH_BYTES}); 0: one range per message. */
    RangeBatches(long budgetBytes, Out out) {
        if (budgetBytes < 0) throw new IllegalArgumentException("a budget of " + budgetBytes + " bytes");
        this.budget = Math.min(budgetBytes, CopyWire.BATCH_BYTES);
        this.out = out;
    }

    @Override
    public boolean send(SourcePart part) {
        if (!(part instanceof SourcePart.Range r) || budget == 0) {
            return flush() && out.send(CopyWire.chunk(part));   // what was gathered goes before the trailer
        }
        long bytes = r.zero() ? 0 : r.length();
        if (gatheredBytes + bytes > budget || gathered.size() == MAX_RANGES) {
            if (!flush()) return false;
            if (bytes > budget) return out.send(CopyWire.chunk(r));   // bigger than a message alone: as ever, no copy
        }
        gathered.add(CopyWire.range(r, true));
        gatheredBytes += bytes;
        return true;
    }

    /** Sends what was gathered, one range as a message of its own; true when nothing was or the reader took it. */
    private boolean flush() {
        if (gathered.isEmpty()) return true;
        SourceChunk chunk = gathered.size() == 1 ? SourceChunk.newBuilder().setRange(gathered.getFirst()).build() : CopyWire.chunk(gathered);
        gathered.clear();
        gatheredBytes = 0;
        return out.send(chunk);
    }
}
