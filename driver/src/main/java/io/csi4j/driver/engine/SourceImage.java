package io.csi4j.driver.engine;

import java.nio.ByteBuffer;
import java.util.function.BooleanSupplier;

/**
 * A stable image of a snapshot, or of a volume cut at open (frozen if mounted), held open to be sent to another node.
 * Closing it removes the cut of a volume (a temporary file of the pool, swept at start-up after a crash).
 */
public interface SourceImage extends AutoCloseable {

    /** Its size in bytes. */
    long sizeBytes();

    /** Its allocated ranges (SEEK_DATA/SEEK_HOLE), computed as they are pulled. */
    RangeCursor allocated(BooleanSupplier cancelled);

    /** Fills {@code into} from {@code offset} (fewer bytes only at the end of the image); returns how many. */
    int read(ByteBuffer into, long offset);

    @Override
    void close();
}
