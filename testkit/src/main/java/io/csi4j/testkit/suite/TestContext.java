package io.csi4j.testkit.suite;

import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeContentSource;
import io.csi4j.testkit.AccessType;
import io.csi4j.testkit.SanityConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.csi4j.proto.csi.TopologyRequirement;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.function.Supplier;

/**
 * What a test body works with: stubs whose every call has the run's deadline, the discovered
 * capabilities, and helpers that create objects the way a CO does and register their removal.
 */
public final class TestContext {
    private final Session session;
    private final String testName;
    private final Cleanup cleanup = new Cleanup();
    private final Map<String, Cleanup.Handle> volumes = new HashMap<>();
    private final Map<String, Cleanup.Handle> snapshots = new HashMap<>();
    private final Map<String, Cleanup.Handle> groupSnapshots = new HashMap<>();
    private final Map<String, List<Cleanup.Handle>> volumeGroupHandles = new HashMap<>();

    TestContext(Session session, String testName) {
        this.session = session;
        this.testName = testName;
    }

    public String testName() { return testName; }
    public SanityConfig config() { return session.config(); }
    public Capabilities caps() { return session.capabilities(); }
    public String nodeId() { return session.nodeId(); }
    public int repeats() { return session.config().idempotencyRepeats(); }
    public Map<String, String> secrets() { return session.config().secrets(); }
    public AccessType accessType() { return session.config().accessType(); }
    public long volumeSize() { return session.config().volumeSize(); }
    public Cleanup cleanup() { return cleanup; }

    public IdentityGrpc.IdentityBlockingStub identity() { return session.identity(); }
    public ControllerGrpc.ControllerBlockingStub controller() { return session.controller(); }
    public NodeGrpc.NodeBlockingStub node() { return session.node(); }
    public GroupControllerGrpc.GroupControllerBlockingStub groupController() { return session.groupController(); }
    public SnapshotMetadataGrpc.SnapshotMetadataBlockingStub snapshotMetadata() { return session.snapshotMetadata(); }
    public io.csi4j.proto.addons.identity.IdentityGrpc.IdentityBlockingStub addonsIdentity() { return session.addonsIdentity(); }
    public io.csi4j.proto.addons.volumegroup.ControllerGrpc.ControllerBlockingStub volumeGroups() { return session.volumeGroups(); }

    /** A unique name for an object of this test. */
    public String name(String what) {
        return session.nextName(what);
    }

    public static void notApplicable(String why) {
        throw new NotApplicable(why);
    }

    // ---- volumes ------------------------------------------------------------------------------

    public VolumeCapability capability() {
        return capability(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER);
    }

    public VolumeCapability capability(VolumeCapability.AccessMode.Mode mode) {
        VolumeCapability.Builder b = VolumeCapability.newBuilder()
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(mode));
        if (accessType() == AccessType.BLOCK) {
            b.setBlock(VolumeCapability.BlockVolume.getDefaultInstance());
        } else {
            b.setMount(VolumeCapability.MountVolume.newBuilder().setFsType(config().fsType()));
        }
        return b.build();
    }

    /** The configured capability with the other access type (block for mount, mount for block). */
    public VolumeCapability otherAccessType() {
        VolumeCapability.Builder b = capability().toBuilder();
        if (accessType() == AccessType.BLOCK) b.setMount(VolumeCapability.MountVolume.newBuilder().setFsType(config().fsType()));
        else b.setBlock(VolumeCapability.BlockVolume.getDefaultInstance());
        return b.build();
    }

    public static CapacityRange required(long bytes) {
        return CapacityRange.newBuilder().setRequiredBytes(bytes).build();
    }

    /** A valid CreateVolume request for a volume of the configured size, access type, parameters and secrets. */
    public CreateVolumeRequest.Builder volumeRequest(String name) {
        var request = CreateVolumeRequest.newBuilder()
                .setName(name)
                .setCapacityRange(required(volumeSize()))
                .addVolumeCapabilities(capability())
                .putAllParameters(config().params())
                .putAllSecrets(secrets());
        session.placementTopology().ifPresent(node -> request.setAccessibilityRequirements(
                TopologyRequirement.newBuilder().addRequisite(node).addPreferred(node)));
        return request;
    }

    public Volume createVolume(String what) {
        return createVolume(volumeRequest(name(what)).build());
    }

    /** Creates a volume that must be created, and registers its deletion. */
    public Volume createVolume(CreateVolumeRequest request) {
        Volume volume = ok("CreateVolume MUST succeed for a valid request (" + describeSource(request) + ")",
                () -> controller().createVolume(request)).getVolume();
        check(!volume.getVolumeId().isEmpty(), "CreateVolumeResponse.volume.volume_id is REQUIRED", () -> "an empty volume_id");
        trackVolume(volume.getVolumeId());
        check(volume.getCapacityBytes() == 0 || volume.getCapacityBytes() >= request.getCapacityRange().getRequiredBytes(),
                "CreateVolume: capacity_range MUST always be honored (volume at least required_bytes)",
                () -> "capacity_bytes " + volume.getCapacityBytes() + " < required " + request.getCapacityRange().getRequiredBytes());
        long limit = request.getCapacityRange().getLimitBytes();
        check(limit == 0 || volume.getCapacityBytes() <= limit,
                "CreateVolume: capacity_range MUST always be honored (the volume MUST NOT be bigger than limit_bytes)",
                () -> "capacity_bytes " + volume.getCapacityBytes() + " > limit " + limit);
        Limits.id(volume.getVolumeId(), "Volume.volume_id");
        Limits.map(volume.getVolumeContextMap(), "Volume.volume_context");
        return volume;
    }

    private static String describeSource(CreateVolumeRequest request) {
        if (!request.hasVolumeContentSource()) return "empty volume";
        VolumeContentSource source = request.getVolumeContentSource();
        return source.hasSnapshot() ? "from snapshot" : "clone of a volume";
    }

    public Volume createVolumeFromSnapshot(String what, String snapshotId, long size) {
        return createVolume(volumeRequest(name(what))
                .setCapacityRange(required(size))
                .setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshotId)))
                .build());
    }

    public Volume cloneVolume(String what, String sourceVolumeId, long size) {
        return createVolume(volumeRequest(name(what))
                .setCapacityRange(required(size))
                .setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(sourceVolumeId)))
                .build());
    }

    /** Registers the deletion of a volume someone created (idempotent: once per id). */
    public synchronized void trackVolume(String volumeId) {
        volumes.computeIfAbsent(volumeId, id -> cleanup.add(Cleanup.Stage.DELETE_VOLUME, "DeleteVolume " + id,
                () -> controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).putAllSecrets(secrets()).build())));
    }

    /** Deletes a volume of this test, which must succeed. */
    public void deleteVolume(String volumeId) {
        ok("DeleteVolume MUST succeed for an existing, unused volume",
                () -> controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).putAllSecrets(secrets()).build()));
        forgetVolume(volumeId);
    }

    public synchronized void forgetVolume(String volumeId) {
        Cleanup.Handle handle = volumes.remove(volumeId);
        if (handle != null) handle.done();
    }

    // ---- snapshots ----------------------------------------------------------------------------

    public CreateSnapshotRequest snapshotRequest(String sourceVolumeId, String name) {
        return CreateSnapshotRequest.newBuilder().setSourceVolumeId(sourceVolumeId).setName(name).putAllSecrets(secrets()).build();
    }

    public Snapshot createSnapshot(String sourceVolumeId, String what) {
        CreateSnapshotRequest request = snapshotRequest(sourceVolumeId, name(what));
        Snapshot snapshot = ok("CreateSnapshot MUST succeed for an existing source volume",
                () -> controller().createSnapshot(request)).getSnapshot();
        check(!snapshot.getSnapshotId().isEmpty(), "CreateSnapshotResponse.snapshot.snapshot_id is REQUIRED", () -> "an empty snapshot_id");
        trackSnapshot(snapshot.getSnapshotId());
        return snapshot;
    }

    public synchronized void trackSnapshot(String snapshotId) {
        snapshots.computeIfAbsent(snapshotId, id -> cleanup.add(Cleanup.Stage.DELETE_SNAPSHOT, "DeleteSnapshot " + id,
                () -> controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(id).putAllSecrets(secrets()).build())));
    }

    public void deleteSnapshot(String snapshotId) {
        ok("DeleteSnapshot MUST succeed for an existing snapshot",
                () -> controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snapshotId).putAllSecrets(secrets()).build()));
        forgetSnapshot(snapshotId);
    }

    public synchronized void forgetSnapshot(String snapshotId) {
        Cleanup.Handle handle = snapshots.remove(snapshotId);
        if (handle != null) handle.done();
    }

    public synchronized void trackGroupSnapshot(String groupSnapshotId, List<String> snapshotIds) {
        groupSnapshots.computeIfAbsent(groupSnapshotId, id -> cleanup.add(Cleanup.Stage.DELETE_GROUP_SNAPSHOT,
                "DeleteVolumeGroupSnapshot " + id,
                () -> groupController().deleteVolumeGroupSnapshot(DeleteVolumeGroupSnapshotRequest.newBuilder()
                        .setGroupSnapshotId(id).addAllSnapshotIds(snapshotIds).putAllSecrets(secrets()).build())));
    }

    public synchronized void forgetGroupSnapshot(String groupSnapshotId) {
        Cleanup.Handle handle = groupSnapshots.remove(groupSnapshotId);
        if (handle != null) handle.done();
    }

    // ---- volume groups (CSI-Addons) -----------------------------------------------------------

    /**
     * Registers the removal of a volume group: emptied (when the plugin can modify membership) before
     * volumes are deleted and deleted after them; without MODIFY_VOLUME_GROUP the group is deleted
     * before the volumes, since its members could not be deleted one by one.
     */
    public synchronized void trackVolumeGroup(String groupId) {
        volumeGroupHandles.computeIfAbsent(groupId, this::registerVolumeGroup);
    }

    public synchronized void forgetVolumeGroup(String groupId) {
        List<Cleanup.Handle> handles = volumeGroupHandles.remove(groupId);
        if (handles != null) handles.forEach(Cleanup.Handle::done);
    }

    private List<Cleanup.Handle> registerVolumeGroup(String groupId) {
        var delete = (Cleanup.Action) () -> volumeGroups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder()
                .setVolumeGroupId(groupId).putAllSecrets(secrets()).build());
        if (!caps().has(Capability.VolumeGroup.Type.MODIFY_VOLUME_GROUP)) {
            return List.of(cleanup.add(Cleanup.Stage.LEAVE_VOLUME_GROUP, "DeleteVolumeGroup " + groupId, delete));
        }
        Cleanup.Handle leave = cleanup.add(Cleanup.Stage.LEAVE_VOLUME_GROUP, "ModifyVolumeGroupMembership " + groupId + " to empty", () -> {
            try {
                volumeGroups().modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest.newBuilder()
                        .setVolumeGroupId(groupId).putAllSecrets(secrets()).build());
            } catch (StatusRuntimeException e) {
                // a group that is gone already has no members (the CSI-Addons sidecar tolerates NOT_FOUND here too)
                if (e.getStatus().getCode() != Status.Code.NOT_FOUND) throw e;
            }
        });
        return List.of(leave, cleanup.add(Cleanup.Stage.DELETE_VOLUME_GROUP, "DeleteVolumeGroup " + groupId, delete));
    }

    // ---- node side ----------------------------------------------------------------------------

    /** A new, empty staging directory (creating it is the CO's job); removed after the test if empty. */
    public Path newStagingDir() {
        Path dir = session.stagingRoot().resolve(name("staging"));
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create staging directory " + dir, e);
        }
        cleanup.add(Cleanup.Stage.REMOVE_DIRECTORY, "remove staging directory " + dir, () -> removeEmpty(dir));
        return dir;
    }

    /** A new target path whose parent exists (the CO's job) and which itself does not (the SP creates it). */
    public Path newTargetPath() {
        Path parent = session.targetRoot().resolve(name("target"));
        try {
            Files.createDirectories(parent);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create target parent directory " + parent, e);
        }
        cleanup.add(Cleanup.Stage.REMOVE_DIRECTORY, "remove target parent directory " + parent, () -> removeEmpty(parent));
        return parent.resolve("target");
    }

    /** Paths the spec makes every SP accept although they are longer than the general 128-byte limit. */
    static final int LONG_PATH = 200;

    /** A new, empty staging directory whose absolute path is longer than 128 bytes (about {@value #LONG_PATH}). */
    public Path newLongStagingDir() {
        Path dir = session.stagingRoot().resolve(longName(session.stagingRoot(), "staging-long"));
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create staging directory " + dir, e);
        }
        cleanup.add(Cleanup.Stage.REMOVE_DIRECTORY, "remove staging directory " + dir, () -> removeEmpty(dir));
        return dir;
    }

    /** A new target path (parent made, path itself not) whose absolute path is longer than 128 bytes. */
    public Path newLongTargetPath() {
        Path parent = session.targetRoot().resolve(longName(session.targetRoot(), "target-long"));
        try {
            Files.createDirectories(parent);
        } catch (IOException e) {
            throw new IllegalStateException("cannot create target parent directory " + parent, e);
        }
        cleanup.add(Cleanup.Stage.REMOVE_DIRECTORY, "remove target parent directory " + parent, () -> removeEmpty(parent));
        return parent.resolve("target");
    }

    /** One path component that makes {@code root}/component at least {@value #LONG_PATH} bytes (a component stays under 255). */
    private String longName(Path root, String what) {
        String name = name(what) + "-";
        int pad = Math.max(0, LONG_PATH - root.toAbsolutePath().toString().length() - 1 - name.length());
        return name + "p".repeat(Math.min(pad, 250 - name.length()));
    }

    private static void removeEmpty(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) return;
        try (var entries = Files.list(dir)) {
            List<String> left = entries.map(p -> p.getFileName().toString()).limit(5).toList();
            if (!left.isEmpty()) throw new IOException(dir + " still holds " + left + " (left by the plugin?)");
        }
        Files.delete(dir);
    }

    public Attachment attach(Volume volume) {
        return attach(volume, capability(), false);
    }

    /** Controller-publishes (if advertised), stages (if advertised) and publishes the volume on this node. */
    public Attachment attach(Volume volume, VolumeCapability capability, boolean readonly) {
        return attach(volume, capability, readonly, this::newStagingDir, this::newTargetPath);
    }

    /** Like {@link #attach(Volume, VolumeCapability, boolean)}, with the staging directory and target path from these. */
    public Attachment attach(Volume volume, VolumeCapability capability, boolean readonly,
                             Supplier<Path> stagingDirs, Supplier<Path> targetPaths) {
        String id = volume.getVolumeId();
        Map<String, String> publishContext = Map.of();
        Optional<Cleanup.Handle> controllerUnpublish = Optional.empty();
        boolean controllerPublished = caps().controllerPublishes();
        if (controllerPublished) {
            String node = nodeId();
            boolean controllerReadonly = readonly && caps().has(ControllerServiceCapability.RPC.Type.PUBLISH_READONLY);
            var answer = ok("ControllerPublishVolume MUST succeed for an existing volume and this node's node_id",
                    () -> controller().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder()
                            .setVolumeId(id).setNodeId(node).setVolumeCapability(capability).setReadonly(controllerReadonly)
                            .putAllSecrets(secrets()).putAllVolumeContext(volume.getVolumeContextMap()).build()));
            publishContext = answer.getPublishContextMap();
            controllerUnpublish = Optional.of(cleanup.add(Cleanup.Stage.CONTROLLER_UNPUBLISH, "ControllerUnpublishVolume " + id,
                    () -> controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder()
                            .setVolumeId(id).setNodeId(node).putAllSecrets(secrets()).build())));
        }
        Optional<Path> staging = Optional.empty();
        Optional<Cleanup.Handle> unstage = Optional.empty();
        if (caps().stages()) {
            Path dir = stagingDirs.get();
            Map<String, String> context = publishContext;
            ok("NodeStageVolume MUST succeed for a (controller-published) volume and an existing staging directory",
                    () -> node().nodeStageVolume(NodeStageVolumeRequest.newBuilder()
                            .setVolumeId(id).putAllPublishContext(context).setStagingTargetPath(dir.toString())
                            .setVolumeCapability(capability).putAllSecrets(secrets())
                            .putAllVolumeContext(volume.getVolumeContextMap()).build()));
            staging = Optional.of(dir);
            unstage = Optional.of(cleanup.add(Cleanup.Stage.NODE_UNSTAGE, "NodeUnstageVolume " + id,
                    () -> node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder()
                            .setVolumeId(id).setStagingTargetPath(dir.toString()).build())));
        }
        Path target = targetPaths.get();
        NodePublishVolumeRequest publish = publishRequest(volume, publishContext, staging, target, capability, readonly);
        ok("NodePublishVolume MUST succeed for a " + (caps().stages() ? "staged" : "") + " volume and a new target_path",
                () -> node().nodePublishVolume(publish));
        Cleanup.Handle unpublish = cleanup.add(Cleanup.Stage.NODE_UNPUBLISH, "NodeUnpublishVolume " + id,
                () -> node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder()
                        .setVolumeId(id).setTargetPath(target.toString()).build()));
        return new Attachment(volume, capability, readonly, publishContext, staging, target, controllerPublished,
                unpublish, unstage, controllerUnpublish);
    }

    public NodePublishVolumeRequest publishRequest(Volume volume, Map<String, String> publishContext, Optional<Path> staging,
                                                   Path target, VolumeCapability capability, boolean readonly) {
        return NodePublishVolumeRequest.newBuilder()
                .setVolumeId(volume.getVolumeId())
                .putAllPublishContext(publishContext)
                .setStagingTargetPath(staging.map(Path::toString).orElse(""))
                .setTargetPath(target.toString())
                .setVolumeCapability(capability)
                .setReadonly(readonly)
                .putAllSecrets(secrets())
                .putAllVolumeContext(volume.getVolumeContextMap())
                .build();
    }

    /** Undoes {@link #attach}: unpublish (the target path must be gone after), unstage, controller unpublish. */
    public void detach(Attachment a) {
        unpublish(a);
        unstageAndControllerUnpublish(a);
    }

    public void unpublish(Attachment a) {
        ok("NodeUnpublishVolume MUST succeed for a published volume",
                () -> node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder()
                        .setVolumeId(a.volumeId()).setTargetPath(a.targetPath().toString()).build()));
        a.nodeUnpublish().done();
        check(!Files.exists(a.targetPath(), LinkOption.NOFOLLOW_LINKS),
                "NodeUnpublishVolume: the SP MUST delete the file or directory it created at target_path",
                () -> a.targetPath() + " still exists");
    }

    public void unstageAndControllerUnpublish(Attachment a) {
        a.nodeUnstage().ifPresent(handle -> {
            ok("NodeUnstageVolume MUST succeed for a staged volume",
                    () -> node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder()
                            .setVolumeId(a.volumeId()).setStagingTargetPath(a.stagingPathText()).build()));
            handle.done();
        });
        a.controllerUnpublish().ifPresent(handle -> {
            String node = nodeId();
            ok("ControllerUnpublishVolume MUST succeed for a published volume",
                    () -> controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder()
                            .setVolumeId(a.volumeId()).setNodeId(node).putAllSecrets(secrets()).build()));
            handle.done();
        });
    }
}
