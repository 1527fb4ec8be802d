package io.csi4j.driver.engine.image;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Looks at the loop devices that found a volume's image attached nowhere, remembered so that DeleteVolume looks once,
 * not twice. A delete looks before its commit (to refuse a staged volume) and again under the volume's lock right
 * before the unlink (a stage may have come meanwhile); each look reads /proc/partitions and the backing file of every
 * bound loop device on the host, a sixth of a create+delete's CPU (docs/control-path.md). Every loop device this
 * process binds is bound by {@code LoopDevice.attach}, which counts the attaches it starts and finishes: when none was
 * running as the first look began and none has started since, the second look cannot find anything the first did not,
 * and is skipped. A device bound by another process is not ours to order against: it could come right after the
 * unlink as well as right before it; a remembered look is still only trusted for {@link #VALID_NANOS}, which keeps that
 * window as short as it was.
 */
final class UnattachedLooks {
    static final long VALID_NANOS = 1_000_000_000L;
    private static final int MAX_REMEMBERED = 256;   // looks no delete followed (in-use checks of other calls)

    private record Look(long attachesStarted, long atNanos) {}

    private final ConcurrentHashMap<String, Look> looks = new ConcurrentHashMap<>();
    private final LongSupplier attachesStarted;
    private final LongSupplier nanoTime;

    /** {@code attachesStarted}: how many attaches this process has started so far; {@code nanoTime}: a monotonic clock. */
    UnattachedLooks(LongSupplier attachesStarted, LongSupplier nanoTime) {
        this.attachesStarted = attachesStarted;
        this.nanoTime = nanoTime;
    }

    /**
     * After a look that found no device of the volume: {@code quietBefore} is what {@code LoopDevice.quietAttaches()}
     * answered before that look began (negative while an attach was running, which is then not remembered).
     */
    void remember(String volumeId, long quietBefore) {
        if (quietBefore < 0) return;
        if (looks.size() >= MAX_REMEMBERED) looks.clear();
        looks.put(volumeId, new Look(quietBefore, nanoTime.getAsLong()));
    }

    /** True when the volume's last remembered look still holds (no attach started since, and recent); forgets it. */
    boolean stillUnattached(String volumeId) {
        Look look = looks.remove(volumeId);
        return look != null && look.attachesStarted() == attachesStarted.getAsLong()
                && nanoTime.getAsLong() - look.atNanos() < VALID_NANOS;
    }
}
