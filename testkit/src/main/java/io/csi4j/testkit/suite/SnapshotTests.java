package io.csi4j.testkit.suite;

import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.GET_SNAPSHOT;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.GET_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.LIST_SNAPSHOTS;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.LIST_VOLUMES;
import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.fails;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateSnapshotResponse;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.GetSnapshotRequest;
import io.csi4j.proto.csi.GetSnapshotResponse;
import io.csi4j.proto.csi.ListSnapshotsRequest;
import io.csi4j.proto.csi.ListSnapshotsResponse;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeContentSource;
import io.grpc.Status;
import java.util.List;

/** Snapshots on the Controller service: CreateSnapshot, DeleteSnapshot, GetSnapshot, ListSnapshots. */
final class SnapshotTests {
    private SnapshotTests() {}

    static final Requirement SNAPSHOTS = Requirement.controller(CREATE_DELETE_VOLUME, CREATE_DELETE_SNAPSHOT);

    /** Calls CreateSnapshot and registers whatever the plugin created. */
    static CreateSnapshotResponse tryCreate(TestContext ctx, CreateSnapshotRequest request) {
        CreateSnapshotResponse answer = ctx.controller().createSnapshot(request);
        if (!answer.getSnapshot().getSnapshotId().isEmpty()) ctx.trackSnapshot(answer.getSnapshot().getSnapshotId());
        return answer;
    }

    static DeleteSnapshotRequest delete(TestContext ctx, String id) {
        return DeleteSnapshotRequest.newBuilder().setSnapshotId(id).putAllSecrets(ctx.secrets()).build();
    }

    /** Checks the fields the spec makes REQUIRED of a snapshot cut from {@code sourceVolumeId}. */
    static void checkSnapshot(Snapshot s, String sourceVolumeId, String rpc) {
        check(!s.getSnapshotId().isEmpty(), rpc + ": Snapshot.snapshot_id is REQUIRED", () -> "an empty snapshot_id");
        Limits.id(s.getSnapshotId(), rpc + ": Snapshot.snapshot_id");
        check(s.getSourceVolumeId().equals(sourceVolumeId), rpc + ": Snapshot.source_volume_id (REQUIRED) identifies the source volume",
                () -> "'" + s.getSourceVolumeId() + "' for source " + sourceVolumeId);
        check(s.hasCreationTime() && (s.getCreationTime().getSeconds() > 0 || s.getCreationTime().getNanos() > 0),
                rpc + ": Snapshot.creation_time is REQUIRED", () -> "no creation_time");
        check(s.getSizeBytes() >= 0, rpc + ": Snapshot.size_bytes MUST NOT be negative", () -> Long.toString(s.getSizeBytes()));
    }

    /** Repeats CreateSnapshot (as the spec tells a CO to) until ready_to_use, within one call timeout. */
    static Snapshot awaitReady(TestContext ctx, CreateSnapshotRequest request, Snapshot snapshot) throws InterruptedException {
        long deadline = System.nanoTime() + ctx.config().callTimeout().toNanos();
        Snapshot current = snapshot;
        while (!current.getReadyToUse()) {
            if (System.nanoTime() > deadline) {
                throw new SpecViolation("CreateSnapshot: ready_to_use becomes true once the snapshot is processed",
                        "still false after " + ctx.config().callTimeout().toSeconds() + " s");
            }
            Thread.sleep(250);
            current = ok("CreateSnapshot MUST be idempotent while a snapshot is processed", () -> ctx.controller().createSnapshot(request)).getSnapshot();
        }
        return current;
    }

    /** A snapshot of {@code volumeId} that is ready to be a volume source. */
    static Snapshot readySnapshot(TestContext ctx, String volumeId, String what) throws InterruptedException {
        CreateSnapshotRequest request = ctx.snapshotRequest(volumeId, ctx.name(what));
        Snapshot s = ok("CreateSnapshot MUST succeed for an existing source volume", () -> tryCreate(ctx, request)).getSnapshot();
        checkSnapshot(s, volumeId, "CreateSnapshot");
        return awaitReady(ctx, request, s);
    }

    static List<SanityTest> tests() {
        Catalog c = new Catalog();
        create(c);
        delete(c);
        get(c);
        list(c);
        restoreRules(c);
        return c.tests();
    }

    private static void create(Catalog c) {
        String p = "Controller/CreateSnapshot";
        c.add(p + "/cuts a snapshot of a volume", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            Snapshot s = readySnapshot(ctx, v.getVolumeId(), "snapshot");
            check(s.getGroupSnapshotId().isEmpty(), "CreateSnapshot: a snapshot that is not part of a group snapshot has no group_snapshot_id",
                    () -> "group_snapshot_id " + s.getGroupSnapshotId());
        });

        c.add(p + "/repeated identical requests return the same snapshot", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            CreateSnapshotRequest request = ctx.snapshotRequest(v.getVolumeId(), ctx.name("idempotent"));
            Snapshot first = ok("CreateSnapshot MUST succeed for an existing source volume", () -> tryCreate(ctx, request)).getSnapshot();
            for (int i = 1; i < ctx.repeats(); i++) {
                Snapshot again = ok("CreateSnapshot MUST be idempotent: a snapshot of that name and source MUST reply OK",
                        () -> tryCreate(ctx, request)).getSnapshot();
                check(again.getSnapshotId().equals(first.getSnapshotId()),
                        "CreateSnapshot MUST be idempotent: repeated calls with one name MUST return the same snapshot",
                        () -> "snapshot_id " + again.getSnapshotId() + " after " + first.getSnapshotId());
                check(again.getCreationTime().equals(first.getCreationTime()),
                        "Snapshot.creation_time is when the point-in-time snapshot was taken: a repeated request reports the same time",
                        () -> again.getCreationTime() + " after " + first.getCreationTime());
            }
        });

        c.add(p + "/the same name for another source volume fails with ALREADY_EXISTS", SNAPSHOTS, ctx -> {
            Volume a = ctx.createVolume("snap-source-a");
            Volume b = ctx.createVolume("snap-source-b");
            String name = ctx.name("conflict");
            ok("CreateSnapshot MUST succeed for an existing source volume", () -> tryCreate(ctx, ctx.snapshotRequest(a.getVolumeId(), name)));
            fails(Status.Code.ALREADY_EXISTS,
                    "CreateSnapshot: a snapshot of that name that is incompatible with the specified source volume MUST fail with ALREADY_EXISTS",
                    () -> tryCreate(ctx, ctx.snapshotRequest(b.getVolumeId(), name)));
        });

        c.add(p + "/a source volume that does not exist fails with NOT_FOUND", Requirement.controller(CREATE_DELETE_SNAPSHOT), ctx ->
                fails(Status.Code.NOT_FOUND, "CreateSnapshot: a source volume that does not exist MUST fail with NOT_FOUND (unknown ids)",
                        () -> tryCreate(ctx, ctx.snapshotRequest(ctx.name("no-such-volume"), ctx.name("orphan")))));

        c.missing(p, "name", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            return () -> tryCreate(ctx, ctx.snapshotRequest(v.getVolumeId(), ""));
        });
        c.missing(p, "source_volume_id", Requirement.controller(CREATE_DELETE_SNAPSHOT),
                ctx -> () -> tryCreate(ctx, ctx.snapshotRequest("", ctx.name("sourceless"))));
        c.add(p + "/a name with a control character fails with INVALID_ARGUMENT", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            fails(Status.Code.INVALID_ARGUMENT,
                    "CreateSnapshot.name MUST NOT contain U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F; an invalid field MUST fail with INVALID_ARGUMENT",
                    () -> tryCreate(ctx, ctx.snapshotRequest(v.getVolumeId(), ctx.name("bad") + "\u0001")));
        });

        c.add(p + "/a name longer than 128 bytes fails with INVALID_ARGUMENT", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            String name = (ctx.name("long") + "-" + "x".repeat(128)).substring(0, 129);
            fails(Status.Code.INVALID_ARGUMENT, "CreateSnapshot.name: strings SHALL NOT exceed 128 bytes; an invalid field MUST fail with INVALID_ARGUMENT",
                    () -> tryCreate(ctx, ctx.snapshotRequest(v.getVolumeId(), name)));
        });
    }

    private static void delete(Catalog c) {
        String p = "Controller/DeleteSnapshot";
        c.add(p + "/deletes a snapshot and repeated calls answer OK", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            Snapshot s = readySnapshot(ctx, v.getVolumeId(), "delete");
            for (int i = 0; i < ctx.repeats(); i++) {
                int attempt = i;
                ok(attempt == 0 ? "DeleteSnapshot MUST succeed for an existing snapshot"
                                : "DeleteSnapshot MUST be idempotent: a snapshot that does not exist MUST reply OK",
                        () -> ctx.controller().deleteSnapshot(delete(ctx, s.getSnapshotId())));
                if (attempt == 0) ctx.forgetSnapshot(s.getSnapshotId());
            }
            if (ctx.caps().has(GET_SNAPSHOT)) {
                fails(Status.Code.NOT_FOUND, "GetSnapshot: a snapshot that does not exist any more MUST fail with NOT_FOUND",
                        () -> ctx.controller().getSnapshot(GetSnapshotRequest.newBuilder().setSnapshotId(s.getSnapshotId()).putAllSecrets(ctx.secrets()).build()));
            }
            if (ctx.caps().has(LIST_SNAPSHOTS)) {
                boolean listed = Listing.all(ctx, Listing.SNAPSHOTS).contains(s.getSnapshotId());
                check(!listed, "ListSnapshots SHALL return the snapshots on the storage system: a deleted snapshot is not one", () -> "the deleted snapshot is still listed");
            }
        });

        c.add(p + "/a snapshot a volume was restored from is deleted, or refused with FAILED_PRECONDITION", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            Snapshot s = readySnapshot(ctx, v.getVolumeId(), "restored-from");
            Volume restored = ctx.createVolumeFromSnapshot("restored", s.getSnapshotId(), ctx.volumeSize());
            Status.Code got = Verdicts.okOr("DeleteSnapshot: a snapshot that cannot be deleted because it is in use MUST fail with FAILED_PRECONDITION",
                    () -> ctx.controller().deleteSnapshot(delete(ctx, s.getSnapshotId())), Status.Code.FAILED_PRECONDITION);
            if (got == Status.Code.OK) {
                ctx.forgetSnapshot(s.getSnapshotId());
                if (ctx.caps().has(GET_VOLUME)) {
                    ok("DeleteSnapshot of a snapshot leaves the volumes restored from it (they are volumes of their own)",
                            () -> ctx.controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(restored.getVolumeId()).build()));
                }
            } else if (ctx.caps().has(GET_SNAPSHOT)) {
                ok("DeleteSnapshot refused with FAILED_PRECONDITION leaves the snapshot as it was",
                        () -> ctx.controller().getSnapshot(getRequest(ctx, s.getSnapshotId())));
            }
        });

        c.add(p + "/a snapshot that does not exist answers OK", Requirement.controller(CREATE_DELETE_SNAPSHOT), ctx ->
                ok("DeleteSnapshot MUST reply OK for a snapshot that does not exist",
                        () -> ctx.controller().deleteSnapshot(delete(ctx, ctx.name("no-such-snapshot")))));

        c.missing(p, "snapshot_id", Requirement.controller(CREATE_DELETE_SNAPSHOT), ctx -> () -> ctx.controller().deleteSnapshot(delete(ctx, "")));
    }

    static GetSnapshotRequest getRequest(TestContext ctx, String id) {
        return GetSnapshotRequest.newBuilder().setSnapshotId(id).putAllSecrets(ctx.secrets()).build();
    }

    private static void get(Catalog c) {
        String p = "Controller/GetSnapshot";
        c.add(p + "/returns the snapshot", SNAPSHOTS.and(Requirement.controller(GET_SNAPSHOT)), ctx -> {
            Volume v = ctx.createVolume("snap-source");
            Snapshot s = readySnapshot(ctx, v.getVolumeId(), "get");
            GetSnapshotResponse answer = ok("GetSnapshot MUST succeed for an existing snapshot (GET_SNAPSHOT)",
                    () -> ctx.controller().getSnapshot(getRequest(ctx, s.getSnapshotId())));
            check(answer.getSnapshot().getSnapshotId().equals(s.getSnapshotId()), "GetSnapshotResponse.snapshot (REQUIRED) is the snapshot asked for",
                    () -> "snapshot_id " + answer.getSnapshot().getSnapshotId());
            checkSnapshot(answer.getSnapshot(), v.getVolumeId(), "GetSnapshot");
        });

        c.add(p + "/a snapshot that does not exist fails with NOT_FOUND", Requirement.controller(GET_SNAPSHOT), ctx ->
                fails(Status.Code.NOT_FOUND, "GetSnapshot: a snapshot that does not exist MUST fail with NOT_FOUND",
                        () -> ctx.controller().getSnapshot(getRequest(ctx, ctx.name("no-such-snapshot")))));

        c.missing(p, "snapshot_id", Requirement.controller(GET_SNAPSHOT), ctx -> () -> ctx.controller().getSnapshot(getRequest(ctx, "")));
    }

    private static void list(Catalog c) {
        String p = "Controller/ListSnapshots";
        Requirement list = SNAPSHOTS.and(Requirement.controller(LIST_SNAPSHOTS));

        c.add(p + "/lists a new snapshot", list, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            Snapshot s = readySnapshot(ctx, v.getVolumeId(), "listed");
            List<ListSnapshotsResponse.Entry> all = Listing.snapshots(ctx, ListSnapshotsRequest.getDefaultInstance());
            var entry = all.stream().filter(e -> e.getSnapshot().getSnapshotId().equals(s.getSnapshotId())).findFirst();
            check(entry.isPresent(), "ListSnapshots SHALL return all snapshots on the storage system",
                    () -> "a new snapshot " + s.getSnapshotId() + " is missing from " + all.size() + " entries");
            checkSnapshot(entry.get().getSnapshot(), v.getVolumeId(), "ListSnapshots");
        });

        c.add(p + "/filters by snapshot_id", list, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            Snapshot s = readySnapshot(ctx, v.getVolumeId(), "filtered");
            readySnapshot(ctx, v.getVolumeId(), "other");
            var entries = Listing.snapshots(ctx, ListSnapshotsRequest.newBuilder().setSnapshotId(s.getSnapshotId()).build());
            check(entries.size() == 1 && entries.getFirst().getSnapshot().getSnapshotId().equals(s.getSnapshotId()),
                    "ListSnapshots.snapshot_id can be used to list only a specific snapshot",
                    () -> entries.size() + " entries: " + entries.stream().map(e -> e.getSnapshot().getSnapshotId()).toList());
        });

        c.add(p + "/filters by source_volume_id", list, ctx -> {
            Volume a = ctx.createVolume("snap-source-a");
            Volume b = ctx.createVolume("snap-source-b");
            Snapshot sa = readySnapshot(ctx, a.getVolumeId(), "of-a");
            Snapshot sb = readySnapshot(ctx, b.getVolumeId(), "of-b");
            var entries = Listing.snapshots(ctx, ListSnapshotsRequest.newBuilder().setSourceVolumeId(a.getVolumeId()).build());
            List<String> ids = entries.stream().map(e -> e.getSnapshot().getSnapshotId()).toList();
            check(ids.contains(sa.getSnapshotId()) && !ids.contains(sb.getSnapshotId())
                            && entries.stream().allMatch(e -> e.getSnapshot().getSourceVolumeId().equals(a.getVolumeId())),
                    "ListSnapshots.source_volume_id can be used to list snapshots by volume", () -> "listed " + ids);
        });

        c.add(p + "/an unknown snapshot_id lists nothing", Requirement.controller(LIST_SNAPSHOTS), ctx -> {
            var entries = Listing.snapshots(ctx, ListSnapshotsRequest.newBuilder().setSnapshotId(ctx.name("no-such-snapshot")).build());
            check(entries.isEmpty(), "ListSnapshots SHALL return the snapshots within the given parameters: none for an unknown snapshot_id",
                    () -> entries.size() + " entries");
        });
    }

    private static void restoreRules(Catalog c) {
        c.add("Controller/CreateVolume/from a snapshot with limit_bytes below the snapshot size fails with OUT_OF_RANGE", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            Snapshot s = readySnapshot(ctx, v.getVolumeId(), "large");
            if (s.getSizeBytes() < 2) TestContext.notApplicable("the snapshot does not report a size_bytes");
            long small = s.getSizeBytes() / 2;
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("too-small"))
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(small).setLimitBytes(small))
                    .setVolumeContentSource(VolumeContentSource.newBuilder()
                            .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(s.getSnapshotId())))
                    .build();
            fails(Status.Code.OUT_OF_RANGE,
                    "Snapshot.size_bytes: the size of the volume MUST NOT be less than the size of the source snapshot; an unsupported capacity_range MUST fail with OUT_OF_RANGE",
                    () -> ControllerTests.tryCreate(ctx, request));
        });

        c.add("Controller/CreateVolume/the same name with another volume_content_source fails with ALREADY_EXISTS", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            Snapshot s = readySnapshot(ctx, v.getVolumeId(), "other-source");
            String name = ctx.name("conflict");
            ctx.createVolume(ctx.volumeRequest(name).build());
            CreateVolumeRequest fromSnapshot = ctx.volumeRequest(name)
                    .setVolumeContentSource(VolumeContentSource.newBuilder()
                            .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(s.getSnapshotId())))
                    .build();
            fails(Status.Code.ALREADY_EXISTS,
                    "CreateVolume: a volume of that name that is incompatible with the specified volume_content_source MUST fail with ALREADY_EXISTS",
                    () -> ControllerTests.tryCreate(ctx, fromSnapshot));
        });

        c.add("Controller/DeleteVolume/a volume with snapshots is deleted and its snapshots stay usable, or FAILED_PRECONDITION", SNAPSHOTS, ctx -> {
            Volume v = ctx.createVolume("snap-source");
            Snapshot s = readySnapshot(ctx, v.getVolumeId(), "survivor");
            Status.Code got = Verdicts.okOr("DeleteVolume of a volume with snapshots: OK (snapshots independent) or FAILED_PRECONDITION",
                    () -> ctx.controller().deleteVolume(ControllerTests.delete(ctx, v.getVolumeId())), Status.Code.FAILED_PRECONDITION);
            if (got == Status.Code.OK) {
                ctx.forgetVolume(v.getVolumeId());
                if (ctx.caps().has(LIST_SNAPSHOTS)) {
                    check(Listing.all(ctx, Listing.SNAPSHOTS).contains(s.getSnapshotId()),
                            "DeleteVolume: snapshots of a deleted volume MUST still appear on ListSnapshot calls", () -> "the snapshot is gone");
                }
                ctx.createVolumeFromSnapshot("from-orphan", s.getSnapshotId(), ctx.volumeSize());
            } else {
                if (ctx.caps().has(GET_VOLUME)) {
                    ok("DeleteVolume answering FAILED_PRECONDITION MUST NOT alter the volume in any way",
                            () -> ctx.controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build()));
                } else if (ctx.caps().has(LIST_VOLUMES)) {
                    check(Listing.volumes(ctx).stream().anyMatch(e -> e.getVolume().getVolumeId().equals(v.getVolumeId())),
                            "DeleteVolume answering FAILED_PRECONDITION MUST NOT alter the volume in any way", () -> "the volume is no longer listed");
                }
            }
        });
    }
}
