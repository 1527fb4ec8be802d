package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.EngineErrors;
import io.csi4j.driver.engine.ImageImport;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.os.Fallocate;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.LongConsumer;

/** {@link ImageImport} over a temporary file of an image pool; the engine reveals it at commit. */
final class FileImageImport implements ImageImport {
    /** What commit does once the bytes are in: sync, keep a replica, size, reveal. Returns the volume's size. */
    interface Finish {
        long finish(Path temp);
    }

    private final Path temp;
    private final FileChannel channel;
    private final String what;
    private final Finish finish;
    /** Told the size that became provisioned (0 when nothing was committed), exactly once. */
    private final LongConsumer settle;
    private boolean done;
    /** Bytes written since the last background flush began, and that flush (null when none runs). */
    private long unflushed;
    private Thread flusher;
    /** Unflushed bytes that start a background flush: the final sync then has little left to write. */
    static final long FLUSH_EVERY = 64L << 20;

    FileImageImport(Path temp, String what, Finish finish, LongConsumer settle) {
        this.temp = temp;
        this.what = what;
        this.finish = finish;
        this.settle = settle;
        try {
            this.channel = FileChannel.open(temp, StandardOpenOption.WRITE);
        } catch (IOException e) {
            settle.accept(0);
            PoolLayout.deleteQuietly(temp);
            throw EngineErrors.of("opening " + what, e);
        }
    }

    @Override
    public void write(ByteBuffer data, long offset) {
        try {
            long at = offset;
            while (data.hasRemaining()) at += channel.write(data, at);
            unflushed += at - offset;
        } catch (IOException e) {
            throw EngineErrors.of("writing " + what + " at " + offset, e);
        }
        if (unflushed >= FLUSH_EVERY && (flusher == null || !flusher.isAlive())) {
            unflushed = 0;
            // the disk writes what arrived while more arrives; commit's sync is what makes it durable
            flusher = Thread.ofVirtual().name("csi4j-flush").start(() -> {
                try {
                    channel.force(false);
                } catch (IOException ignored) {
                    // commit's own sync reports what is wrong with the disk
                }
            });
        }
    }

    /** Waits for a background flush still running (before the channel closes under it). */
    private void awaitFlusher() {
        if (flusher == null) return;
        try {
            flusher.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void zero(long offset, long length) {
        EngineErrors.run("punching " + what + " at " + offset + "+" + length, () -> Fallocate.punchHole(temp, offset, length));
    }

    @Override
    public long commit() {
        if (done) throw new IllegalStateException(what + " is committed or closed");
        awaitFlusher();
        try {
            channel.close();
        } catch (IOException e) {
            throw EngineErrors.of("closing " + what, e);
        }
        long size = EngineErrors.translate("revealing " + what, () -> finish.finish(temp));
        done = true;
        settle.accept(size);
        return size;
    }

    @Override
    public void close() {
        if (done) return;
        done = true;
        try {
            channel.close();
        } catch (IOException ignored) {
            // removed below either way
        }
        PoolLayout.deleteQuietly(temp);
        settle.accept(0);
    }
}
