package io.csi4j.driver.cluster;

import io.csi4j.driver.engine.FreezeHold;
import io.csi4j.sdk.CsiException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.logging.Logger;

/** An agent's freeze holds by the controller's hold id; each lapses by itself, so no controller failure leaves a workload frozen. */
final class FreezeHolds {
    private static final Logger LOG = Logger.getLogger(FreezeHolds.class.getName());

    private final ConcurrentMap<String, FreezeHold> held = new ConcurrentHashMap<>();

    void add(String holdId, FreezeHold hold, Duration lapse) {
        if (held.putIfAbsent(holdId, hold) != null) {
            hold.close();
            throw CsiException.alreadyExists("freeze hold '" + holdId + "' is held already");
        }
        Thread.ofVirtual().name("csi4j-freeze-lapse").start(() -> {
            try {
                Thread.sleep(lapse);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (held.remove(holdId, hold)) {
                LOG.warning("freeze hold '" + holdId + "' on " + hold.volumeIds() + " lapsed after " + lapse.toMillis()
                        + " ms without a thaw from the controller; thawing");
                hold.close();
            }
        });
    }

    Optional<FreezeHold> get(String holdId) {
        return Optional.ofNullable(held.get(holdId)).filter(h -> !h.released());
    }

    void release(String holdId) {
        FreezeHold hold = held.remove(holdId);
        if (hold != null) hold.close();
    }
}
