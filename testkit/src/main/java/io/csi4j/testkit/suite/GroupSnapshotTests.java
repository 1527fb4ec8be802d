package io.csi4j.testkit.suite;

import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.GET_SNAPSHOT;
import static io.csi4j.proto.csi.GroupControllerServiceCapability.RPC.Type.CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT;
import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.fails;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.csi.CreateVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeGroupSnapshotResponse;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.GetVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.GroupControllerGetCapabilitiesRequest;
import io.csi4j.proto.csi.GroupControllerServiceCapability;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeGroupSnapshot;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import io.csi4j.proto.csi.ControllerServiceCapability;

/** The GroupController service: group snapshots of several volumes, and restoring each member. */
final class GroupSnapshotTests {
    private GroupSnapshotTests() {}

    static final Requirement GROUPS = Requirement.controller(CREATE_DELETE_VOLUME)
            .and(Requirement.groupController(CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT));
    static final Requirement GROUP_RPCS = Requirement.groupController(CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT);

    static CreateVolumeGroupSnapshotRequest request(TestContext ctx, String name, List<String> volumeIds) {
        return CreateVolumeGroupSnapshotRequest.newBuilder().setName(name).addAllSourceVolumeIds(volumeIds).putAllSecrets(ctx.secrets()).build();
    }

    /** Calls CreateVolumeGroupSnapshot and registers whatever the plugin created. */
    static CreateVolumeGroupSnapshotResponse tryCreate(TestContext ctx, CreateVolumeGroupSnapshotRequest request) {
        CreateVolumeGroupSnapshotResponse answer = ctx.groupController().createVolumeGroupSnapshot(request);
        VolumeGroupSnapshot g = answer.getGroupSnapshot();
        if (!g.getGroupSnapshotId().isEmpty()) {
            ctx.trackGroupSnapshot(g.getGroupSnapshotId(), g.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList());
        }
        return answer;
    }

    /** A ready group snapshot of the volumes, with every field the spec requires checked. */
    static VolumeGroupSnapshot readyGroupSnapshot(TestContext ctx, List<String> volumeIds) throws InterruptedException {
        CreateVolumeGroupSnapshotRequest request = request(ctx, ctx.name("group-snapshot"), volumeIds);
        VolumeGroupSnapshot g = ok("CreateVolumeGroupSnapshot MUST succeed for existing source volumes",
                () -> tryCreate(ctx, request)).getGroupSnapshot();
        long deadline = System.nanoTime() + ctx.config().callTimeout().toNanos();
        while (!g.getReadyToUse()) {
            checkGroup(g, volumeIds);
            if (System.nanoTime() > deadline) {
                throw new SpecViolation("CreateVolumeGroupSnapshot: ready_to_use becomes true once all snapshots are processed",
                        "still false after " + ctx.config().callTimeout().toSeconds() + " s");
            }
            Thread.sleep(250);
            g = ok("CreateVolumeGroupSnapshot MUST be idempotent while the group snapshot is processed",
                    () -> tryCreate(ctx, request)).getGroupSnapshot();
        }
        checkGroup(g, volumeIds);
        return g;
    }

    static void checkGroup(VolumeGroupSnapshot g, List<String> volumeIds) {
        check(!g.getGroupSnapshotId().isEmpty(), "VolumeGroupSnapshot.group_snapshot_id is REQUIRED", () -> "an empty group_snapshot_id");
        Limits.id(g.getGroupSnapshotId(), "VolumeGroupSnapshot.group_snapshot_id");
        check(g.hasCreationTime(), "VolumeGroupSnapshot.creation_time is REQUIRED", () -> "no creation_time");
        Set<String> sources = new HashSet<>();
        for (Snapshot s : g.getSnapshotsList()) {
            SnapshotTests.checkSnapshot(s, s.getSourceVolumeId(), "CreateVolumeGroupSnapshot");
            sources.add(s.getSourceVolumeId());
            check(s.getGroupSnapshotId().equals(g.getGroupSnapshotId()),
                    "Snapshot.group_snapshot_id inside a VolumeGroupSnapshot MUST be the same as the group_snapshot_id in that message",
                    () -> "'" + s.getGroupSnapshotId() + "' in group " + g.getGroupSnapshotId());
        }
        check(sources.equals(new HashSet<>(volumeIds)) && g.getSnapshotsCount() == volumeIds.size(),
                "VolumeGroupSnapshot.snapshots (REQUIRED): one snapshot of each source volume",
                () -> "snapshots of " + g.getSnapshotsList().stream().map(Snapshot::getSourceVolumeId).toList() + " for " + volumeIds);
        boolean allReady = g.getSnapshotsList().stream().allMatch(Snapshot::getReadyToUse);
        check(allReady || !g.getReadyToUse(), "VolumeGroupSnapshot.ready_to_use: if any snapshot is not ready_to_use, the SP MUST set this field to false",
                () -> "ready_to_use=true with a member not ready");
    }

    /**
     * A group snapshot of published members, which are detached after. A plugin that cannot give
     * write-order consistency while members are in use MUST fail (FAILED_PRECONDITION, "cannot
     * snapshot multiple volumes together"): then the members are detached and the snapshot taken again.
     */
    static VolumeGroupSnapshot snapshotInUse(TestContext ctx, List<String> ids, List<Attachment> attached) throws InterruptedException {
        try {
            VolumeGroupSnapshot g = readyGroupSnapshot(ctx, ids);
            for (Attachment a : attached) ctx.detach(a);
            return g;
        } catch (SpecViolation e) {
            if (!e.getMessage().contains("got " + Status.Code.FAILED_PRECONDITION)) throw e;
            for (Attachment a : attached) ctx.detach(a);
            return readyGroupSnapshot(ctx, ids);
        }
    }

    static List<String> snapshotIds(VolumeGroupSnapshot g) {
        return g.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList();
    }

    static GetVolumeGroupSnapshotRequest getRequest(TestContext ctx, String id, List<String> snapshotIds) {
        return GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(id).addAllSnapshotIds(snapshotIds).putAllSecrets(ctx.secrets()).build();
    }

    static DeleteVolumeGroupSnapshotRequest deleteRequest(TestContext ctx, String id, List<String> snapshotIds) {
        return DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(id).addAllSnapshotIds(snapshotIds).putAllSecrets(ctx.secrets()).build();
    }

    static List<String> volumes(TestContext ctx, int count) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) ids.add(ctx.createVolume("member" + i).getVolumeId());
        return ids;
    }

    static List<SanityTest> tests() {
        Catalog c = new Catalog();

        c.add("GroupController/GroupControllerGetCapabilities/returns only known capabilities",
                Requirement.custom("plugin capability GROUP_CONTROLLER_SERVICE", (caps, k) -> caps.has(PluginCapability.Service.Type.GROUP_CONTROLLER_SERVICE)), ctx -> {
                    var answer = ok("GroupControllerGetCapabilities: a Plugin that implements GroupController MUST implement this RPC",
                            () -> ctx.groupController().groupControllerGetCapabilities(GroupControllerGetCapabilitiesRequest.getDefaultInstance()));
                    for (GroupControllerServiceCapability cap : answer.getCapabilitiesList()) {
                        check(cap.hasRpc() && cap.getRpc().getType() == CREATE_DELETE_GET_VOLUME_GROUP_SNAPSHOT,
                                "GroupControllerGetCapabilities reports capabilities the spec defines", () -> Verdicts.oneLine(cap));
                    }
                });

        String create = "GroupController/CreateVolumeGroupSnapshot";
        c.add(create + "/snapshots several volumes together", GROUPS, ctx -> readyGroupSnapshot(ctx, volumes(ctx, 2)));

        c.add(create + "/repeated identical requests return the same group snapshot", GROUPS, ctx -> {
            CreateVolumeGroupSnapshotRequest request = request(ctx, ctx.name("idempotent"), volumes(ctx, 2));
            VolumeGroupSnapshot first = ok("CreateVolumeGroupSnapshot MUST succeed for existing source volumes", () -> tryCreate(ctx, request)).getGroupSnapshot();
            for (int i = 1; i < ctx.repeats(); i++) {
                VolumeGroupSnapshot again = ok("CreateVolumeGroupSnapshot MUST be idempotent: same name, source_volume_ids and parameters MUST reply OK",
                        () -> tryCreate(ctx, request)).getGroupSnapshot();
                check(again.getGroupSnapshotId().equals(first.getGroupSnapshotId())
                                && new HashSet<>(snapshotIds(again)).equals(new HashSet<>(snapshotIds(first))),
                        "CreateVolumeGroupSnapshot MUST be idempotent: the group snapshot MUST only be created once",
                        () -> again.getGroupSnapshotId() + " " + snapshotIds(again) + " after " + first.getGroupSnapshotId() + " " + snapshotIds(first));
            }
        });

        c.add(create + "/the same name with other source volumes fails with ALREADY_EXISTS", GROUPS, ctx -> {
            List<String> members = volumes(ctx, 2);
            String name = ctx.name("conflict");
            ok("CreateVolumeGroupSnapshot MUST succeed for existing source volumes", () -> tryCreate(ctx, request(ctx, name, members)));
            fails(Status.Code.ALREADY_EXISTS,
                    "CreateVolumeGroupSnapshot: a group snapshot of that name that is incompatible with the specified source_volume_ids MUST fail with ALREADY_EXISTS",
                    () -> tryCreate(ctx, request(ctx, name, members.subList(0, 1))));
        });

        c.add(create + "/a source volume that does not exist fails with NOT_FOUND", GROUPS, ctx -> {
            List<String> members = new ArrayList<>(volumes(ctx, 1));
            members.add(ctx.name("no-such-volume"));
            fails(Status.Code.NOT_FOUND, "CreateVolumeGroupSnapshot: unknown source volume ids MUST fail with NOT_FOUND (general error scheme)",
                    () -> tryCreate(ctx, request(ctx, ctx.name("orphan"), members)));
        });

        c.missing(create, "name", GROUPS, ctx -> {
            List<String> members = volumes(ctx, 2);
            return () -> tryCreate(ctx, request(ctx, "", members));
        });
        c.missing(create, "source_volume_ids", GROUP_RPCS, ctx -> () -> tryCreate(ctx, request(ctx, ctx.name("empty"), List.of())));

        String get = "GroupController/GetVolumeGroupSnapshot";
        c.add(get + "/returns the group snapshot", GROUPS, ctx -> {
            VolumeGroupSnapshot g = readyGroupSnapshot(ctx, volumes(ctx, 2));
            VolumeGroupSnapshot got = ok("GetVolumeGroupSnapshot MUST succeed for an existing group snapshot",
                    () -> ctx.groupController().getVolumeGroupSnapshot(getRequest(ctx, g.getGroupSnapshotId(), snapshotIds(g)))).getGroupSnapshot();
            check(got.getGroupSnapshotId().equals(g.getGroupSnapshotId()) && new HashSet<>(snapshotIds(got)).equals(new HashSet<>(snapshotIds(g))),
                    "GetVolumeGroupSnapshotResponse.group_snapshot (REQUIRED) is the group snapshot asked for, with its snapshots",
                    () -> got.getGroupSnapshotId() + " " + snapshotIds(got));
        });

        c.add(get + "/a group snapshot that does not exist fails with NOT_FOUND", GROUP_RPCS, ctx ->
                fails(Status.Code.NOT_FOUND, "GetVolumeGroupSnapshot: a volume group snapshot that does not exist MUST fail with NOT_FOUND",
                        () -> ctx.groupController().getVolumeGroupSnapshot(getRequest(ctx, ctx.name("no-such-group-snapshot"), List.of(ctx.name("no-such-snapshot"))))));

        c.missing(get, "group_snapshot_id", GROUP_RPCS,
                ctx -> () -> ctx.groupController().getVolumeGroupSnapshot(getRequest(ctx, "", List.of(ctx.name("no-such-snapshot")))));
        // snapshot_ids is REQUIRED, but proto3 sends an empty list as absent: it binds the CO, and a plugin that knows
        // the group's members acts without it (csi-sanity sends none). A given list is still the plugin's to check.
        c.add(get + "/a group snapshot that does not exist, asked without snapshot_ids, fails with NOT_FOUND", GROUP_RPCS, ctx ->
                fails(Status.Code.NOT_FOUND, "GetVolumeGroupSnapshot: a volume group snapshot that does not exist MUST fail with NOT_FOUND"
                                + " (an empty snapshot_ids cannot be told from an absent one in proto3: its REQUIRED binds the CO)",
                        () -> ctx.groupController().getVolumeGroupSnapshot(getRequest(ctx, ctx.name("no-such-group-snapshot"), List.of()))));

        String delete = "GroupController/DeleteVolumeGroupSnapshot";
        c.add(delete + "/deletes the group snapshot and its snapshots, and repeated calls answer OK", GROUPS, ctx -> {
            VolumeGroupSnapshot g = readyGroupSnapshot(ctx, volumes(ctx, 2));
            for (int i = 0; i < ctx.repeats(); i++) {
                int attempt = i;
                ok(attempt == 0 ? "DeleteVolumeGroupSnapshot MUST succeed for an existing group snapshot"
                                : "DeleteVolumeGroupSnapshot MUST be idempotent: a group snapshot that does not exist MUST reply OK",
                        () -> ctx.groupController().deleteVolumeGroupSnapshot(deleteRequest(ctx, g.getGroupSnapshotId(), snapshotIds(g))));
                if (attempt == 0) ctx.forgetGroupSnapshot(g.getGroupSnapshotId());
            }
            fails(Status.Code.NOT_FOUND, "GetVolumeGroupSnapshot: a volume group snapshot that no longer exists MUST fail with NOT_FOUND",
                    () -> ctx.groupController().getVolumeGroupSnapshot(getRequest(ctx, g.getGroupSnapshotId(), snapshotIds(g))));
            if (ctx.caps().has(GET_SNAPSHOT)) {
                for (String id : snapshotIds(g)) {
                    fails(Status.Code.NOT_FOUND, "DeleteVolumeGroupSnapshot deletes all individual snapshots of the group (GetSnapshot then fails with NOT_FOUND)",
                            () -> ctx.controller().getSnapshot(SnapshotTests.getRequest(ctx, id)));
                }
            }
        });

        c.add(delete + "/a group snapshot that does not exist answers OK", GROUP_RPCS, ctx ->
                ok("DeleteVolumeGroupSnapshot MUST reply OK for a group snapshot that does not exist",
                        () -> ctx.groupController().deleteVolumeGroupSnapshot(deleteRequest(ctx, ctx.name("no-such-group-snapshot"), List.of(ctx.name("no-such-snapshot"))))));

        c.missing(delete, "group_snapshot_id", GROUP_RPCS,
                ctx -> () -> ctx.groupController().deleteVolumeGroupSnapshot(deleteRequest(ctx, "", List.of(ctx.name("no-such-snapshot")))));
        c.add(delete + "/a group snapshot that does not exist, asked without snapshot_ids, answers OK", GROUP_RPCS, ctx ->
                ok("DeleteVolumeGroupSnapshot MUST reply OK for a group snapshot that does not exist"
                                + " (an empty snapshot_ids cannot be told from an absent one in proto3: its REQUIRED binds the CO)",
                        () -> ctx.groupController().deleteVolumeGroupSnapshot(deleteRequest(ctx, ctx.name("no-such-group-snapshot"), List.of()))));

        c.add("Controller/DeleteSnapshot/a member of a group snapshot is refused with INVALID_ARGUMENT, or deleted",
                GROUPS.and(Requirement.controller(ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT)), ctx -> {
                    VolumeGroupSnapshot g = readyGroupSnapshot(ctx, volumes(ctx, 2));
                    String member = snapshotIds(g).getFirst();
                    Status.Code got = Verdicts.okOr("DeleteSnapshot: a snapshot that is part of a group snapshot and cannot be deleted stand alone MUST fail with INVALID_ARGUMENT",
                            () -> ctx.controller().deleteSnapshot(SnapshotTests.delete(ctx, member)), Status.Code.INVALID_ARGUMENT);
                    if (got == Status.Code.OK) {
                        // the plugin treats members as independent: the group snapshot now has the others
                        ctx.forgetGroupSnapshot(g.getGroupSnapshotId());
                        ctx.trackGroupSnapshot(g.getGroupSnapshotId(), snapshotIds(g).subList(1, g.getSnapshotsCount()));
                    } else if (ctx.caps().has(GET_SNAPSHOT)) {
                        Snapshot still = ok("DeleteSnapshot refused with INVALID_ARGUMENT leaves the member snapshot as it was",
                                () -> ctx.controller().getSnapshot(SnapshotTests.getRequest(ctx, member))).getSnapshot();
                        check(still.getGroupSnapshotId().equals(g.getGroupSnapshotId()),
                                "Snapshot.group_snapshot_id: a member that MUST NOT be deleted stand alone names its group snapshot",
                                () -> "group_snapshot_id '" + still.getGroupSnapshotId() + "'");
                    }
                });

        c.add("Lifecycle/group snapshot/each member of a group snapshot restores its own data", GROUPS, ctx -> {
            List<Volume> members = List.of(ctx.createVolume("member0"), ctx.createVolume("member1"));
            List<byte[]> data = new ArrayList<>();
            List<Attachment> attached = new ArrayList<>();
            for (Volume v : members) {
                Attachment a = ctx.attach(v);
                byte[] pattern = VolumeData.pattern(LifecycleTests.seed());
                LifecycleTests.write(ctx, a, pattern);
                data.add(pattern);
                attached.add(a);
            }
            VolumeGroupSnapshot g = snapshotInUse(ctx, members.stream().map(Volume::getVolumeId).toList(), attached);
            for (int i = 0; i < members.size(); i++) {
                String source = members.get(i).getVolumeId();
                Snapshot s = g.getSnapshotsList().stream().filter(x -> x.getSourceVolumeId().equals(source)).findFirst().orElseThrow();
                Volume restored = ctx.createVolumeFromSnapshot("member-restored" + i, s.getSnapshotId(), ctx.volumeSize());
                Attachment r = ctx.attach(restored);
                LifecycleTests.expectData(ctx, r, data.get(i),
                        "after a group snapshot, any individual snapshot from the group MAY be used as a source to provision a new volume with that member's data");
                ctx.detach(r);
                ctx.deleteVolume(restored.getVolumeId());
            }
            ok("DeleteVolumeGroupSnapshot MUST succeed for an existing group snapshot",
                    () -> ctx.groupController().deleteVolumeGroupSnapshot(deleteRequest(ctx, g.getGroupSnapshotId(), snapshotIds(g))));
            ctx.forgetGroupSnapshot(g.getGroupSnapshotId());
        });

        return c.tests();
    }
}
