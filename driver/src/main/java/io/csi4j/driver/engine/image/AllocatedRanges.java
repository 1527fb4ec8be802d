package io.csi4j.driver.engine.image;

import io.csi4j.driver.engine.EngineErrors;
import io.csi4j.driver.engine.RangeCursor;
import io.csi4j.driver.os.ExtentFile;
import java.util.function.BooleanSupplier;
import java.util.concurrent.CancellationException;

/** The allocated ranges of one image from an offset on: SEEK_DATA/SEEK_HOLE, no data read. */
final class AllocatedRanges implements RangeCursor {
    private final ExtentFile image;
    private final BooleanSupplier cancelled;
    private long position;

    AllocatedRanges(ExtentFile image, long from, BooleanSupplier cancelled) {
        this.image = image;
        this.position = from;
        this.cancelled = cancelled;
    }

    @Override
    public Range next() {
        if (cancelled.getAsBoolean()) throw new CancellationException();
        ExtentFile.Range data = EngineErrors.translate("mapping " + image.path(), () -> image.nextData(position));
        if (data == null) {
            position = image.size();
            return null;
        }
        // a range that began before the resume offset is clipped to it: nothing before it is sent again
        long start = Math.max(data.offset(), position);
        position = data.end();
        return new Range(start, data.end() - start);
    }

    @Override
    public long capacityBytes() { return image.size(); }

    @Override
    public Method method() { return Method.SEEK_DATA; }

    @Override
    public void close() { image.close(); }
}
