package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.engine.image.ImageEngine;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Capabilities are found by type: what each engine offers, and the registry's rules. */
class CapabilitiesTest {
    private static final long MIB = 1 << 20;

    /** Every capability there is, and whether the image and the dir engine offer it. */
    private static final Map<Class<? extends Capability>, List<Boolean>> OFFERED = Map.of(
            NodeStorage.class, List.of(true, true),
            Freezer.class, List.of(true, true),
            SnapshotRanges.class, List.of(true, false),
            DataMover.class, List.of(true, false),
            SpaceReclaimer.class, List.of(true, false));

    @Test
    void eachEngineOffersItsCapabilitiesAndTheFakeNone() throws Exception {
        try (TestPool test = TestPool.create("xfs", 512 * MIB);
             ImageEngine image = test.imageEngine(1.0);
             DirEngine dir = test.dirEngine()) {
            MemoryPool fake = new MemoryPool(1L << 30);
            OFFERED.forEach((type, offered) -> {
                assertEquals(offered.get(0), image.capability(type).isPresent(), "image engine: " + type.getSimpleName());
                assertEquals(offered.get(1), dir.capability(type).isPresent(), "dir engine: " + type.getSimpleName());
                assertTrue(fake.capability(type).isEmpty(), "the core's fake offers no " + type.getSimpleName());
                image.capability(type).ifPresent(c -> assertSame(c, image.capability(type).orElseThrow(), "one instance"));
            });
        }
    }

    interface Probe extends Capability {}

    interface Other extends Capability {}

    @Test
    void findsWhatWasRegisteredUnderItsTypeOnly() {
        Probe probe = new Probe() {};
        Capabilities capabilities = Capabilities.builder().add(Probe.class, probe).build();
        assertSame(probe, capabilities.find(Probe.class).orElseThrow());
        assertTrue(capabilities.find(Other.class).isEmpty());
        assertTrue(Capabilities.none().find(Probe.class).isEmpty());
    }

    @Test
    void refusesATypeRegisteredTwiceOrNothing() {
        Capabilities.Builder builder = Capabilities.builder().add(Probe.class, new Probe() {});
        assertThrows(IllegalStateException.class, () -> builder.add(Probe.class, new Probe() {}));
        assertThrows(NullPointerException.class, () -> Capabilities.builder().add(Other.class, null));
    }
}
