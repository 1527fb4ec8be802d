package io.csi4j.driver.mobility;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.engine.ImportBase;
import io.csi4j.driver.engine.Replica;
import io.csi4j.driver.engine.StillImage;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which rounds a secondary may apply in place (docs/inplace-rounds.md 1.1, condition 2): only a delta against its held point. */
class DeltaOfHeldTest {
    private record Case(String name, boolean byChecksums, ImportBase base, String held, boolean inPlace) {}

    /** A still copy of the image as a base: only its kind matters to the rule. */
    private static final StillImage STILL = new StillImage() {
        @Override public long sizeBytes() { return 0; }
        @Override public io.csi4j.driver.engine.RangeCursor allocated(java.util.function.BooleanSupplier cancelled) {
            throw new UnsupportedOperationException("not read by the rule");
        }
        @Override public int read(java.nio.ByteBuffer into, long offset) { throw new UnsupportedOperationException("not read by the rule"); }
        @Override public void close() { }
    };

    @Test
    void onlyADeltaAgainstTheHeldPointMayGoInPlace() {
        Replica p1 = new Replica("vol-1", "p1");
        Replica p0 = new Replica("vol-1", "p0");
        var cases = List.of(
            new Case("a delta against the held point", false, p1, "p1", true),
            new Case("a full copy (first round)", false, null, "", false),
            new Case("a full copy of a copy holding a point", false, null, "p1", false),
            new Case("a resync by checksums against an old replica", true, p0, "p1", false),
            new Case("a resync by checksums against the held point's replica", true, p1, "p1", false),
            new Case("a resync by checksums against the image", true, STILL, "", false),
            new Case("a delta against another replica than the held point", false, p0, "p1", false),
            new Case("a delta while the copy holds no point", false, p1, "", false));
        for (Case c : cases) assertEquals(c.inPlace(), VolumeImports.deltaOfHeld(c.byChecksums(), c.base(), c.held()), c.name());
    }
}
