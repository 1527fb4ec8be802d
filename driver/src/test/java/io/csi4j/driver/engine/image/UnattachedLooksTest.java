package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** When a delete may skip its second look at the loop devices: only while nothing can have been attached since the first. */
class UnattachedLooksTest {
    private final AtomicLong started = new AtomicLong(7);
    private final AtomicLong clock = new AtomicLong(1_000);
    private final UnattachedLooks looks = new UnattachedLooks(started::get, clock::get);

    @Test
    void aLookHoldsUntilAnAttachStartsAndOnlyOnce() {
        looks.remember("v1", 7);
        assertTrue(looks.stillUnattached("v1"));
        assertFalse(looks.stillUnattached("v1"), "consumed: the next delete looks again");

        looks.remember("v2", 7);
        started.incrementAndGet();   // a stage of any volume began after the look
        assertFalse(looks.stillUnattached("v2"));
    }

    @Test
    void aLookMadeWhileAnAttachRanIsNotRemembered() {
        looks.remember("v1", -1);   // LoopDevice.quietAttaches() while an attach was running
        assertFalse(looks.stillUnattached("v1"));
    }

    @Test
    void aLookBeforeTheLastStartedAttachDoesNotHold() {
        looks.remember("v1", 6);    // the counter moved between the look and now
        assertFalse(looks.stillUnattached("v1"));
    }

    @Test
    void anOldLookDoesNotHold() {
        looks.remember("v1", 7);
        clock.addAndGet(UnattachedLooks.VALID_NANOS);
        assertFalse(looks.stillUnattached("v1"));
    }

    @Test
    void aVolumeNeverLookedAtIsLookedAt() {
        looks.remember("v1", 7);
        assertFalse(looks.stillUnattached("v2"));
    }
}
