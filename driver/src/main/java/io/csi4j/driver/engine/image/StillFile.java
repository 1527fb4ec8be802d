package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.engine.StillImage;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.function.BooleanSupplier;

/** {@link StillImage} over a reflink of a volume's image in the pool's temporary directory, removed at close. */
final class StillFile implements StillImage {
    private final Path file;
    private final FileSourceImage image;

    StillFile(Path file) {
        this.file = file;
        this.image = new FileSourceImage(file, true);
    }

    /** The reflink, for the build to reflink in turn. */
    Path file() { return file; }

    @Override public long sizeBytes() { return image.sizeBytes(); }
    @Override public RangeCursor allocated(BooleanSupplier cancelled) { return image.allocated(cancelled); }
    @Override public int read(ByteBuffer into, long offset) { return image.read(into, offset); }
    @Override public void close() { image.close(); }
}
