package io.csi4j.driver.catalog;

import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.GroupSnapshotRecord;
import io.csi4j.driver.model.PublicationRecord;
import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeGroupRecord;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/** Records for tests, with nanosecond timestamps so precision loss would show. */
final class Samples {
    static final Instant T0 = Instant.parse("2025-03-04T05:06:07.123456789Z");

    private Samples() {}

    static VolumeRecord volume(String id) {
        return volume(id, "pvc-" + id, State.CREATING);
    }

    static VolumeRecord volume(String id, String name, State state) {
        return new VolumeRecord(id, name, 1L << 30, VolumeKind.FILESYSTEM, "ext4",
                Map.of("pool", "fast", "note", "quote \" backslash \\"), Map.of("iops", "100"), ContentSource.NONE,
                "node-1", state, T0, T0);
    }

    static SnapshotRecord snapshot(String id, String sourceVolumeId) {
        return new SnapshotRecord(id, "snap-" + id, sourceVolumeId, 1L << 30, null, Map.of("k", "v"),
                State.CREATING, T0, T0);
    }

    static SnapshotRecord member(String id, String sourceVolumeId, String groupSnapshotId) {
        return new SnapshotRecord(id, null, sourceVolumeId, 1L << 20, groupSnapshotId, Map.of(), State.CREATING,
                T0, T0);
    }

    static GroupSnapshotRecord groupSnapshot(String id, List<String> sources) {
        return new GroupSnapshotRecord(id, "gs-" + id, sources, Map.of("consistency", "write-order"),
                State.CREATING, T0, T0);
    }

    static VolumeGroupRecord volumeGroup(String id) {
        return new VolumeGroupRecord(id, "vg-" + id, Map.of(), State.CREATING, T0, T0);
    }

    static PublicationRecord publication(String volumeId, String nodeId) {
        return new PublicationRecord(volumeId, nodeId, false, "SINGLE_NODE_WRITER",
                Map.of("devicePath", "/dev/loop7"), T0);
    }
}
