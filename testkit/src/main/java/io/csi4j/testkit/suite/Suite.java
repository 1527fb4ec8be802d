package io.csi4j.testkit.suite;

import java.util.ArrayList;
import java.util.List;

/** Every test of the conformance suite, in the order they run: cheap questions first, whole lifecycles last. */
public final class Suite {
    private Suite() {}

    public static List<SanityTest> all() {
        List<SanityTest> tests = new ArrayList<>();
        tests.addAll(IdentityTests.tests());
        tests.addAll(ControllerTests.tests());
        tests.addAll(PublishTests.tests());
        tests.addAll(SnapshotTests.tests());
        tests.addAll(SnapshotMetadataTests.tests());
        tests.addAll(PagingTests.tests());
        tests.addAll(ConcurrencyTests.tests());
        tests.addAll(NodeTests.tests());
        tests.addAll(GroupSnapshotTests.tests());
        tests.addAll(VolumeGroupTests.tests());
        tests.addAll(LifecycleTests.tests());
        return List.copyOf(tests);
    }
}
