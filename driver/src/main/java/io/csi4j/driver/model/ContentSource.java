package io.csi4j.driver.model;

import java.util.Objects;

/** Where a volume's initial content came from. */
public sealed interface ContentSource {
    ContentSource NONE = new None();

    record None() implements ContentSource {}

    record FromSnapshot(String snapshotId) implements ContentSource {
        public FromSnapshot { Objects.requireNonNull(snapshotId, "snapshotId"); }
    }

    record FromVolume(String volumeId) implements ContentSource {
        public FromVolume { Objects.requireNonNull(volumeId, "volumeId"); }
    }
}
