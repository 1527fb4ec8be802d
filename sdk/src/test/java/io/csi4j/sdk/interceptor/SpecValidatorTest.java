package io.csi4j.sdk.interceptor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.Timestamp;
import io.csi4j.proto.addons.identity.IdentityProto;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.VolumeGroupProto;
import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerExpandVolumeRequest;
import io.csi4j.proto.csi.ControllerModifyVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CsiProto;
import io.csi4j.proto.csi.DeleteVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.GetVolumeGroupSnapshotRequest;
import io.csi4j.proto.csi.GetVolumeGroupSnapshotResponse;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.NodeGetInfoResponse;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.ValidateVolumeCapabilitiesRequest;
import io.csi4j.proto.csi.ValidateVolumeCapabilitiesResponse;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeCapability.AccessMode.Mode;
import io.csi4j.proto.csi.VolumeGroupSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class SpecValidatorTest {
    private final SpecValidator validator = SpecValidator.forCsi();

    static VolumeCapability mount() {
        return VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(Mode.SINGLE_NODE_WRITER)).build();
    }

    static CreateVolumeRequest.Builder validCreate() {
        return CreateVolumeRequest.newBuilder().setName("pvc-1").addVolumeCapabilities(mount());
    }

    @Test
    void everyRpcOfEveryServedServiceHasAnEntryEvenIfEmpty() {
        Set<String> rpcs = new TreeSet<>();
        for (FileDescriptor file : List.of(CsiProto.getDescriptor(), IdentityProto.getDescriptor(), VolumeGroupProto.getDescriptor(),
                io.csi4j.proto.addons.reclaimspace.ReclaimSpaceProto.getDescriptor(),
                io.csi4j.proto.addons.replication.ReplicationProto.getDescriptor())) {
            for (ServiceDescriptor service : file.getServices()) {
                for (MethodDescriptor method : service.getMethods()) rpcs.add(service.getFullName() + "/" + method.getName());
            }
        }
        assertEquals(rpcs, new TreeSet<>(validator.methodsWithRules()));
        assertEquals(32, rpcs.stream().filter(r -> r.startsWith("csi.v1.")).count(), "csi.v1 has 32 RPCs");
    }

    @Test
    void requiredFieldsAtTheTopAndNested() {
        assertEquals(List.of("name is REQUIRED", "volume_capabilities is REQUIRED"),
                validator.check(CreateVolumeRequest.getDefaultInstance()));
        assertEquals(List.of(), validator.check(validCreate().build()));
        assertEquals(List.of("volume_capabilities[1].access_mode is REQUIRED",
                        "volume_capabilities[1].access_type is REQUIRED (one of block, mount)"),
                validator.check(validCreate().addVolumeCapabilities(VolumeCapability.getDefaultInstance()).build()));
        var unknownMode = mount().toBuilder().setAccessMode(VolumeCapability.AccessMode.getDefaultInstance());
        assertEquals(List.of("volume_capabilities[0].access_mode.mode is REQUIRED"),
                validator.check(validCreate().setVolumeCapabilities(0, unknownMode).build()));
        assertEquals(List.of("capacity_range.required_bytes or capacity_range.limit_bytes is REQUIRED"),
                validator.check(validCreate().setCapacityRange(CapacityRange.getDefaultInstance()).build()));
        // either one of them set (not zero) is enough
        assertEquals(List.of(), validator.check(validCreate().setCapacityRange(CapacityRange.newBuilder().setLimitBytes(1)).build()));
        assertEquals(List.of(), validator.check(validCreate().setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1)).build()));
        assertEquals(List.of("capacity_range is REQUIRED"),
                validator.check(ControllerExpandVolumeRequest.newBuilder().setVolumeId("v").build()));
        assertEquals(List.of("name is REQUIRED"), validator.check(CreateVolumeGroupRequest.getDefaultInstance()));
        // readonly is REQUIRED but false is a valid value on the wire: not reported
        assertEquals(List.of(), validator.check(NodePublishVolumeRequest.newBuilder().setVolumeId("v")
                .setTargetPath("/t").setVolumeCapability(mount()).build()));
    }

    @Test
    void requiredListsAPluginCanDoWithoutAreAcceptedEmpty() {
        // proto3 sends an empty list or map as absent: csi-sanity sends these, and the plugin can act on them
        assertEquals(List.of(), validator.check(GetVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId("g").build()));
        assertEquals(List.of(), validator.check(DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId("g").build()));
        assertEquals(List.of(), validator.check(ControllerModifyVolumeRequest.newBuilder().setVolumeId("v").build()));
        // the other REQUIRED fields of those requests are still checked, and a given list still is
        assertEquals(List.of("group_snapshot_id is REQUIRED"), validator.check(GetVolumeGroupSnapshotRequest.getDefaultInstance()));
        assertEquals(List.of("group_snapshot_id is REQUIRED"), validator.check(DeleteVolumeGroupSnapshotRequest.getDefaultInstance()));
        assertEquals(List.of("volume_id is REQUIRED"), validator.check(ControllerModifyVolumeRequest.getDefaultInstance()));
        assertEquals(List.of("snapshot_ids[0] exceeds 128 bytes (129)"), validator.check(GetVolumeGroupSnapshotRequest.newBuilder()
                .setGroupSnapshotId("g").addSnapshotIds("s".repeat(129)).build()));
        assertEquals(List.of("mutable_parameters exceeds 4096 bytes (4101)"), validator.check(ControllerModifyVolumeRequest.newBuilder()
                .setVolumeId("v").putMutableParameters("k", "v".repeat(4100)).build()));
    }

    @Test
    void requiredListsAPluginCannotDoWithoutStayEnforced() {
        assertEquals(List.of("volume_capabilities is REQUIRED"),
                validator.check(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId("v").build()));
        assertEquals(List.of("source_volume_ids is REQUIRED"),
                validator.check(CreateVolumeGroupSnapshotRequest.newBuilder().setName("gs").build()));
        // answers: the plugin sends them, a confirmation of nothing or a group of no snapshots is its own bug
        assertEquals(List.of("confirmed.volume_capabilities is REQUIRED"), validator.check(ValidateVolumeCapabilitiesResponse.newBuilder()
                .setConfirmed(ValidateVolumeCapabilitiesResponse.Confirmed.getDefaultInstance()).build()));
        assertEquals(List.of("group_snapshot.snapshots is REQUIRED"), validator.check(GetVolumeGroupSnapshotResponse.newBuilder()
                .setGroupSnapshot(VolumeGroupSnapshot.newBuilder().setGroupSnapshotId("g").setCreationTime(Timestamp.newBuilder().setSeconds(1))
                        .setReadyToUse(true)).build()));
    }

    /** The reviewed decision for every REQUIRED repeated or map field of the table: a new one must be decided here. */
    @Test
    void everyRequiredRepeatedOrMapFieldIsDecided() {
        Set<String> acceptedEmpty = Set.of(
                "csi.v1.ControllerModifyVolumeRequest.mutable_parameters",
                "csi.v1.GetVolumeGroupSnapshotRequest.snapshot_ids",
                "csi.v1.DeleteVolumeGroupSnapshotRequest.snapshot_ids");
        Set<String> enforced = Set.of(
                "csi.v1.CreateVolumeRequest.volume_capabilities",
                "csi.v1.ValidateVolumeCapabilitiesRequest.volume_capabilities",
                "csi.v1.CreateVolumeGroupSnapshotRequest.source_volume_ids",
                "csi.v1.ValidateVolumeCapabilitiesResponse.Confirmed.volume_capabilities",
                "csi.v1.VolumeGroupSnapshot.snapshots");
        Set<String> repeated = new TreeSet<>();
        var methods = new java.util.HashMap<String, MethodDescriptor>();
        for (FileDescriptor file : List.of(CsiProto.getDescriptor(), IdentityProto.getDescriptor(), VolumeGroupProto.getDescriptor(),
                io.csi4j.proto.addons.reclaimspace.ReclaimSpaceProto.getDescriptor(),
                io.csi4j.proto.addons.replication.ReplicationProto.getDescriptor())) {
            for (ServiceDescriptor service : file.getServices()) {
                for (MethodDescriptor method : service.getMethods()) methods.put(service.getFullName() + "/" + method.getName(), method);
            }
        }
        for (CsiRules.Rpc rpc : CsiRules.RPCS) {
            var method = methods.get(rpc.method());
            rpc.request().forEach(n -> addIfRepeated(method.getInputType(), n, repeated));
            rpc.response().forEach(n -> addIfRepeated(method.getOutputType(), n, repeated));
        }
        var messages = new java.util.HashMap<String, com.google.protobuf.Descriptors.Descriptor>();
        for (var type : CsiProto.getDescriptor().getMessageTypes()) {
            messages.put(type.getFullName(), type);
            type.getNestedTypes().forEach(n -> messages.put(n.getFullName(), n));
        }
        for (CsiRules.Nested nested : CsiRules.NESTED) {
            if (messages.containsKey(nested.message())) nested.required().forEach(n -> addIfRepeated(messages.get(nested.message()), n, repeated));
        }
        Set<String> decided = new TreeSet<>(acceptedEmpty);
        decided.addAll(enforced);
        assertEquals(decided, repeated);
        assertEquals(acceptedEmpty, CsiRules.REQUIRED_BUT_EMPTY_ACCEPTED.keySet());
    }

    private static void addIfRepeated(com.google.protobuf.Descriptors.Descriptor type, String name, Set<String> out) {
        var f = type.findFieldByName(name);
        if (f.isRepeated()) out.add(f.getFullName());
    }

    @Test
    void sizeLimitsCountUtf8BytesAndHonourTheSpecsOverrides() {
        assertEquals(List.of(), validator.check(validCreate().setName("n".repeat(128)).build()));
        assertEquals(List.of("name exceeds 128 bytes (129)"), validator.check(validCreate().setName("n".repeat(129)).build()));
        assertEquals(List.of("name exceeds 128 bytes (130)"), validator.check(validCreate().setName("\u00e9".repeat(65)).build()));
        var big = validCreate();
        for (int i = 0; i < 40; i++) big.putParameters("key-" + i, "v".repeat(100));
        assertTrue(validator.check(big.build()).getFirst().matches("parameters exceeds 4096 bytes \\(\\d+\\)"));
        // paths may be as long as PATH_MAX; node ids up to 256 bytes
        var publish = NodePublishVolumeRequest.newBuilder().setVolumeId("v").setVolumeCapability(mount());
        assertEquals(List.of(), validator.check(publish.setTargetPath("/" + "p".repeat(1000)).build()));
        assertEquals(List.of("target_path exceeds 4096 bytes (5001)"), validator.check(publish.setTargetPath("/" + "p".repeat(5000)).build()));
        assertEquals(List.of(), validator.check(NodeGetInfoResponse.newBuilder().setNodeId("n".repeat(256)).build()));
        assertEquals(List.of("node_id exceeds 256 bytes (257)"), validator.check(NodeGetInfoResponse.newBuilder().setNodeId("n".repeat(257)).build()));
        // mount_flags is limited as a whole: long single flags are fine, 4 KiB in total is not
        var flags = VolumeCapability.MountVolume.newBuilder().addMountFlags("o".repeat(300));
        assertEquals(List.of(), validator.check(validCreate().setVolumeCapabilities(0, mount().toBuilder().setMount(flags)).build()));
        for (int i = 0; i < 40; i++) flags.addMountFlags("o".repeat(100));
        assertEquals(List.of("volume_capabilities[0].mount.mount_flags exceeds 4096 bytes in total (4300)"),
                validator.check(validCreate().setVolumeCapabilities(0, mount().toBuilder().setMount(flags)).build()));
    }

    @Test
    void secretKeysControlCharactersAndNegativeNumbers() {
        assertEquals(List.of(), validator.check(validCreate().putSecrets("user.name-1_X", "v").build()));
        for (String bad : List.of("with space", "slash/key", "", "colon:")) {
            assertEquals(List.of("secrets has a key that is not only alphanumerics, '-', '_' and '.'"),
                    validator.check(validCreate().putSecrets(bad, "v").build()), bad);
        }
        // the same key is fine in a map that is not secret
        assertEquals(List.of(), validator.check(validCreate().putParameters("with space", "v").build()));
        assertEquals(List.of("name contains a control character (U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F)"),
                validator.check(validCreate().setName("bad\u0007name").build()));
        assertEquals(List.of(), validator.check(validCreate().setName("tab\tand newline\n are whitespace").build()));
        assertEquals(List.of("max_entries must not be negative"), validator.check(ListVolumesRequest.newBuilder().setMaxEntries(-1).build()));
        assertEquals(List.of("capacity_range.limit_bytes must not be negative"),
                validator.check(validCreate().setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1).setLimitBytes(-5)).build()));
    }

    @Test
    void violationsNeverEchoValues() {
        List<String> all = new ArrayList<>();
        all.addAll(validator.check(validCreate().setName("SECRETISH".repeat(20)).build()));
        all.addAll(validator.check(validCreate().putSecrets("SECRETISH key", "SECRETISH").build()));
        assertEquals(2, all.size());
        all.forEach(v -> assertTrue(!v.contains("SECRETISH"), v));
    }
}
