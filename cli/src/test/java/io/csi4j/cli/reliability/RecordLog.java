package io.csi4j.cli.reliability;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32C;

/**
 * A workload for power cuts: a writer thread appending fixed-size records (magic, sequence number, the log's
 * seed, a payload derived from both, a CRC32C) to a file in a published volume or to a published block device,
 * each made durable with fsync before it counts as acknowledged (or, for the harness's own test, without). The
 * check reads the log back: records 0..n-1 must be exactly what was written, n at least what was acknowledged
 * before the cut, and no record of this log may appear after the first gap.
 */
final class RecordLog {
    static final int SIZE = 4096;
    static final long MAX_RECORDS = 8192;   // 32 MiB: a round never writes more
    private static final byte[] MAGIC = "csi4jrec".getBytes(StandardCharsets.US_ASCII);

    final Path path;
    final long seed;
    private final boolean fsync, device;
    private volatile long acked, issued;
    private volatile boolean stop;
    private volatile IOException error;
    private Thread thread;

    /** @param device a block device (written in place) rather than a file (created, truncated) */
    RecordLog(Path path, long seed, boolean fsync, boolean device) {
        this.path = path;
        this.seed = seed;
        this.fsync = fsync;
        this.device = device;
    }

    RecordLog start() {
        thread = Thread.ofPlatform().name("record-log " + path.getFileName()).start(this::write);
        return this;
    }

    /** Records acknowledged so far: fsync returned (or, without fsync, write returned). */
    long acked() {
        return acked;
    }

    /** Stops the writer; the number of records it started to write (an upper bound of what the device can hold). */
    long stop() throws InterruptedException {
        stop = true;
        thread.join();
        return issued;
    }

    /** Why the writer stopped early, or null. */
    IOException error() {
        return error;
    }

    private void write() {
        var options = device ? new StandardOpenOption[] {StandardOpenOption.WRITE}
                : new StandardOpenOption[] {StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING};
        try (FileChannel out = FileChannel.open(path, options)) {
            for (long seq = 0; !stop && seq < MAX_RECORDS; seq++) {
                ByteBuffer record = ByteBuffer.wrap(record(seed, seq));
                issued = seq + 1;
                while (record.hasRemaining()) out.write(record, seq * SIZE + record.position());
                if (fsync) out.force(true);
                acked = seq + 1;
            }
        } catch (IOException e) {
            if (!stop) error = e;
        }
    }

    /** Record {@code seq} of the log {@code seed}, byte for byte. */
    static byte[] record(long seed, long seq) {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        b.put(MAGIC).putLong(seq).putLong(seed);
        byte[] payload = new byte[SIZE - b.position() - Long.BYTES];
        new Random(seed * 31 + seq).nextBytes(payload);
        b.put(payload);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, b.position());
        b.putLong(crc.getValue());
        return b.array();
    }

    /**
     * What a log holds: {@code prefix} records exactly as written from the start; {@code strays}: slots after the
     * first gap that hold a record of this log (whole or torn): must be none. {@code slots} bounds the scan.
     */
    record Found(long prefix, long strays, long firstStray) {}

    static Found read(Path path, long seed, long slots) throws IOException {
        long prefix = -1, strays = 0, firstStray = -1;
        ByteBuffer slot = ByteBuffer.allocate(SIZE);
        byte[] head = ByteBuffer.allocate(MAGIC.length + 16).put(MAGIC).putLong(0).putLong(seed).array();
        try (FileChannel in = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = in.size();   // 0 for a block device: the scan is bounded by slots alone
            long end = size == 0 ? slots : Math.min(slots, size / SIZE + (size % SIZE == 0 ? 0 : 1));
            for (long i = 0; i < end; i++) {
                slot.clear();
                while (slot.hasRemaining() && in.read(slot, i * SIZE + slot.position()) > 0) { /* fill */ }
                byte[] bytes = Arrays.copyOf(slot.array(), slot.position());
                if (prefix < 0) {
                    if (!Arrays.equals(bytes, record(seed, i))) prefix = i;
                } else if (bytes.length >= head.length && Arrays.equals(bytes, 0, MAGIC.length, head, 0, MAGIC.length)
                        && Arrays.equals(bytes, MAGIC.length + 8, MAGIC.length + 16, head, MAGIC.length + 8, MAGIC.length + 16)) {
                    strays++;
                    if (firstStray < 0) firstStray = i;
                }
            }
            if (prefix < 0) prefix = end;
        }
        return new Found(prefix, strays, firstStray);
    }
}
