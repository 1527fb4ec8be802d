package io.csi4j.driver.engine;

/**
 * A forward-only stream of byte ranges of a snapshot, ascending and not overlapping, computed as they are
 * pulled: whoever holds one holds open files and one small window of extents, never the whole map. Ranges
 * that touch are joined, so every range is as long as the data allows (variable length).
 */
public interface RangeCursor extends AutoCloseable {

    /** {@code [offset, offset + length)}, length > 0. */
    record Range(long offset, long length) {
        public Range {
            if (offset < 0 || length <= 0) throw new IllegalArgumentException("bad range " + offset + "+" + length);
        }

        public long end() { return offset + length; }
    }

    /** How a cursor finds its ranges. */
    enum Method {
        /** lseek(SEEK_DATA/SEEK_HOLE) over one image: what is allocated. */
        SEEK_DATA,
        /** FIEMAP of two reflinked images: ranges whose physical extents differ, or that only one side maps. */
        SHARED_EXTENTS,
        /** Reading and comparing both images, where the pool cannot share extents. */
        DATA_COMPARISON
    }

    /** The next range, or null when there is none left. */
    Range next();

    /** The size of the (target) snapshot's volume when it was cut. */
    long capacityBytes();

    Method method();

    @Override
    void close();
}
