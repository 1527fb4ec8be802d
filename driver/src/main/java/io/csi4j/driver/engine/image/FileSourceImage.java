package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.EngineErrors;
import io.csi4j.driver.engine.PoolLayout;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.SourceImage;
import io.csi4j.driver.os.ExtentFile;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.BooleanSupplier;

/** {@link SourceImage} over an image file of the pool; a temporary cut is removed at close. */
final class FileSourceImage implements SourceImage {
    private final Path image;
    private final boolean temporary;
    private final FileChannel channel;
    private final long size;

    FileSourceImage(Path image, boolean temporary) {
        this.image = image;
        this.temporary = temporary;
        try {
            this.channel = FileChannel.open(image, StandardOpenOption.READ);
            this.size = channel.size();
        } catch (IOException e) {
            throw EngineErrors.unchecked("opening " + image, e);
        }
    }

    @Override
    public long sizeBytes() { return size; }

    @Override
    public RangeCursor allocated(BooleanSupplier cancelled) {
        return new AllocatedRanges(EngineErrors.translate("opening " + image, () -> ExtentFile.open(image)), 0, cancelled);
    }

    @Override
    public int read(ByteBuffer into, long offset) {
        int total = 0;
        try {
            while (into.hasRemaining()) {
                int n = channel.read(into, offset + total);
                if (n < 0) break;
                total += n;
            }
        } catch (IOException e) {
            throw EngineErrors.of("reading " + image + " at " + offset, e);
        }
        return total;
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // read-only: nothing to lose
        }
        if (temporary) PoolLayout.deleteQuietly(image);
    }
}
