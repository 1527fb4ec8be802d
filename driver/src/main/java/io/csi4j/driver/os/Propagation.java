package io.csi4j.driver.os;

/** Mount propagation types (MS_SHARED, MS_PRIVATE, MS_SLAVE, MS_UNBINDABLE). */
public enum Propagation {
    SHARED(1 << 20),
    PRIVATE(1 << 18),
    SLAVE(1 << 19),
    UNBINDABLE(1 << 17);

    final long bits;

    Propagation(long bits) {
        this.bits = bits;
    }
}
