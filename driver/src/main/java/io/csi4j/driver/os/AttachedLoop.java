package io.csi4j.driver.os;

import java.nio.file.Path;

/**
 * A loop device just attached, with an open descriptor on it. While that is open the kernel cannot
 * autoclear the device, so mount it (or open it) before {@link #close()}: closing the last holder of
 * an {@link LoopFlag#AUTOCLEAR} device detaches it.
 */
public final class AttachedLoop implements AutoCloseable {
    private final LoopDevice device;
    private final Fd hold;
    private boolean closed;

    AttachedLoop(LoopDevice device, Fd hold) {
        this.device = device;
        this.hold = hold;
    }

    public LoopDevice device() {
        return device;
    }

    /** The device node, e.g. /dev/loop3. */
    public Path node() {
        return device.node();
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        hold.close();
    }
}
