package io.csi4j.driver.engine;

import java.nio.ByteBuffer;

/**
 * A volume being made from bytes that arrive from elsewhere. Until {@link #commit} it is a temporary file of the
 * pool (never under the volume's name, swept at start-up after a crash); its size is promised to the pool from the
 * start. Not thread-safe: one writer.
 */
public interface ImageImport extends AutoCloseable {

    /** Writes {@code data} at {@code offset}; NO_SPACE when the pool's filesystem is full. */
    void write(ByteBuffer data, long offset);

    /** Makes {@code [offset, offset + length)} read as zeros, giving its blocks back (a hole). */
    void zero(long offset, long length);

    /** Makes the image durable and visible under the volume's id with its sidecar; returns its size. */
    long commit();

    /** Removes the temporary image and gives its promise back, unless committed. */
    @Override
    void close();
}
