package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.Wire.MIB;
import static io.csi4j.driver.csi.Wire.fails;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.model.SnapshotRecord;
import io.csi4j.driver.snapshot.Snapshots;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.driver.testing.ScratchFilesystem;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.GetSnapshotRequest;
import io.csi4j.proto.csi.ListSnapshotsRequest;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.csi4j.proto.csi.VolumeContentSource;
import io.grpc.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A replication point's id over the plugin's real socket: to a CO it is an unknown snapshot id (docs/replication.md).
 * A CreateVolume from it is NOT_FOUND and makes nothing (no row, no image); SnapshotMetadata and GetSnapshot on it
 * are NOT_FOUND; ListSnapshots by it is empty; DeleteSnapshot of it is the documented FAILED_PRECONDITION.
 */
@ExtendWith(LeakCheck.class)
class PointIdsSocketTest {
    private static ServedDriver served;

    @BeforeAll
    static void startPlugin() {
        ScratchFilesystem.require("xfs");
        served = ServedDriver.imagePool(1L << 30);
    }

    @AfterAll
    static void stopPlugin() {
        if (served != null) served.close();
    }

    private static ControllerGrpc.ControllerBlockingStub controller() {
        return ControllerGrpc.newBlockingStub(served.channel()).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    private static SnapshotMetadataGrpc.SnapshotMetadataBlockingStub metadata() {
        return SnapshotMetadataGrpc.newBlockingStub(served.channel()).withDeadlineAfter(2, TimeUnit.MINUTES);
    }

    @Test
    void aPointIdIsAnUnknownSnapshotToTheCo() {
        String volume = controller().createVolume(CreateVolumeRequest.newBuilder().setName("pointed")
                .setCapacityRange(Wire.range(16 * MIB, 0)).addVolumeCapabilities(Wire.block()).build()).getVolume().getVolumeId();
        String snap = controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName("co-snap")
                .setSourceVolumeId(volume).build()).getSnapshot().getSnapshotId();
        Snapshots snapshots = served.driver().snapshots();
        // cut as replication's rounds cut one (Rounds.cutPoint): replication's own call, not the CO's
        SnapshotRecord point = snapshots.createPoint(SnapshotRecord.POINT_PREFIX + volume + "-x-1", volume, "");
        try {
            Set<String> files = poolFiles();
            assertTrue(files.stream().anyMatch(f -> f.contains(point.id())), "the point has its image: " + files);

            Status restore = fails(Status.Code.NOT_FOUND, () -> controller().createVolume(CreateVolumeRequest.newBuilder()
                    .setName("from-point").setCapacityRange(Wire.range(16 * MIB, 0)).addVolumeCapabilities(Wire.block())
                    .setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(
                            VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(point.id()))).build()));
            assertTrue(restore.getDescription().contains(point.id()), restore.getDescription());
            assertTrue(served.driver().catalog().volumes().byName("from-point").isEmpty(), "no row left");
            assertEquals(files, poolFiles(), "no image made");

            fails(Status.Code.NOT_FOUND, () -> controller().getSnapshot(GetSnapshotRequest.newBuilder().setSnapshotId(point.id()).build()));
            assertEquals(0, controller().listSnapshots(ListSnapshotsRequest.newBuilder().setSnapshotId(point.id()).build()).getEntriesCount());
            fails(Status.Code.NOT_FOUND, () -> drain(metadata().getMetadataAllocated(
                    GetMetadataAllocatedRequest.newBuilder().setSnapshotId(point.id()).build())));
            fails(Status.Code.NOT_FOUND, () -> drain(metadata().getMetadataDelta(GetMetadataDeltaRequest.newBuilder()
                    .setBaseSnapshotId(point.id()).setTargetSnapshotId(snap).build())));
            fails(Status.Code.NOT_FOUND, () -> drain(metadata().getMetadataDelta(GetMetadataDeltaRequest.newBuilder()
                    .setBaseSnapshotId(snap).setTargetSnapshotId(point.id()).build())));
            fails(Status.Code.FAILED_PRECONDITION, () -> controller().deleteSnapshot(
                    DeleteSnapshotRequest.newBuilder().setSnapshotId(point.id()).build()));

            // the CO's own snapshot still answers on the same paths, and the point is still replication's
            drain(metadata().getMetadataAllocated(GetMetadataAllocatedRequest.newBuilder().setSnapshotId(snap).build()));
            assertEquals(snap, controller().getSnapshot(GetSnapshotRequest.newBuilder().setSnapshotId(snap).build()).getSnapshot().getSnapshotId());
            assertEquals(point, snapshots.byName(point.name()).orElseThrow());
            assertEquals(files, poolFiles(), "nothing made or removed");
        } finally {
            snapshots.deletePoint(point.id());
            controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snap).build());
            controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(volume).build());
        }
    }

    /** The pool's volume and snapshot images. */
    private static Set<String> poolFiles() {
        Path pool = served.driver().engine().pool().path();
        Set<String> files = new TreeSet<>();
        for (String dir : new String[] {"volumes", "snapshots"}) {
            if (!Files.isDirectory(pool.resolve(dir))) continue;
            try (Stream<Path> walk = Files.walk(pool.resolve(dir))) {
                walk.filter(Files::isRegularFile).forEach(p -> files.add(pool.relativize(p).toString()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return files;
    }

    private static void drain(Iterator<?> it) {
        it.forEachRemaining(m -> {});
    }
}
