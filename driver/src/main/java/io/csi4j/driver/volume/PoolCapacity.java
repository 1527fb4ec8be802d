package io.csi4j.driver.volume;

import io.csi4j.driver.engine.BackingSpace;
import io.csi4j.driver.engine.PoolBacking;
import io.csi4j.driver.engine.PoolInfo;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.engine.Preallocation;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.storage.ByteCount;
import java.util.Optional;

/**
 * What the pool can promise a new volume, and whether it can still hold what it promised. The engine answers for the
 * pool's own filesystem; a thin pool image ({@link PoolBacking}) is bounded further by the filesystem beneath it, and
 * when that one fills (another writer), every volume of the pool is reported abnormal until space returns.
 */
final class PoolCapacity {
    private final PoolStorage engine;
    private final Optional<PoolBacking> backing;
    private final double overcommitRatio;

    PoolCapacity(PoolStorage engine, Optional<PoolBacking> backing, double overcommitRatio) {
        this.engine = engine;
        this.backing = backing;
        this.overcommitRatio = overcommitRatio;
    }

    /** The largest volume that can be made now. */
    long allocatable() {
        PoolInfo pool = engine.pool();
        if (backing.isEmpty()) return pool.allocatableBytes();
        return Math.min(pool.allocatableBytes(), backing.get().read().allocatable(pool.provisionedBytes(), overcommitRatio));
    }

    /** RESOURCE_EXHAUSTED, in human units and with the reason, when {@code bytes} more cannot be promised. */
    void require(long bytes) {
        PoolInfo pool = engine.pool();
        if (backing.isPresent()) {
            BackingSpace space = backing.get().read();
            long backed = space.allocatable(pool.provisionedBytes(), overcommitRatio);
            if (bytes > backed && backed < pool.allocatableBytes()) {
                throw DomainException.exhausted("not enough space in the pool: " + space.refusal(bytes, backed));
            }
        }
        if (bytes > pool.allocatableBytes()) {
            throw DomainException.exhausted("not enough space in the pool: " + ByteCount.describe(bytes) + " asked, "
                    + ByteCount.describe(pool.allocatableBytes()) + " available");
        }
    }

    /**
     * A thick volume takes all its {@code bytes} at once and is never overcommitted: RESOURCE_EXHAUSTED unless the
     * filesystem beneath a thin pool image really has them (less its reserve); the engine checks the pool's own.
     */
    void requireThick(long bytes) {
        if (backing.isEmpty()) return;
        BackingSpace space = backing.get().read();
        if (bytes > space.backedAvailable()) {
            throw DomainException.exhausted("not enough space for a thick volume: " + ByteCount.describe(bytes) + " asked, "
                    + ByteCount.describe(space.backedAvailable()) + " really free in the pool image and beneath it on "
                    + space.backingDir() + " (keeping " + ByteCount.describe(space.reserveBytes()) + " free there)");
        }
    }

    /** Before anything is written: the space really free, in the pool and beneath a thin pool image. */
    void requireThick(Preallocation thick, long bytes) {
        requireThick(bytes);
        thick.requireRoom(bytes);
    }

    /** Why every volume of the pool is at risk now (its image's backing filesystem is too full), if it is. */
    Optional<String> poolCondition() {
        return backing.flatMap(b -> b.read().condition());
    }
}
