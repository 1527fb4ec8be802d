package io.csi4j.driver.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeCapability.AccessMode.Mode;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import org.junit.jupiter.api.function.Executable;

/** Request builders and status assertions for the socket tests: the shapes a CO sends. */
final class Wire {
    static final long MIB = 1L << 20;

    private Wire() {}

    static VolumeCapability mount(String fsType, Mode mode) {
        return VolumeCapability.newBuilder()
                .setMount(VolumeCapability.MountVolume.newBuilder().setFsType(fsType))
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(mode)).build();
    }

    static VolumeCapability mount(String fsType) {
        return mount(fsType, Mode.SINGLE_NODE_WRITER);
    }

    static VolumeCapability block(Mode mode) {
        return VolumeCapability.newBuilder()
                .setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(mode)).build();
    }

    static VolumeCapability block() {
        return block(Mode.SINGLE_NODE_WRITER);
    }

    static VolumeCapability withMountGroup(VolumeCapability c, String gid) {
        return c.toBuilder().setMount(c.getMount().toBuilder().setVolumeMountGroup(gid)).build();
    }

    static CreateVolumeRequest.Builder create(String name, long requiredBytes, VolumeCapability capability) {
        return CreateVolumeRequest.newBuilder().setName(name)
                .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(requiredBytes))
                .addVolumeCapabilities(capability);
    }

    static CapacityRange range(long required, long limit) {
        return CapacityRange.newBuilder().setRequiredBytes(required).setLimitBytes(limit).build();
    }

    static NodeStageVolumeRequest stage(String volumeId, Path staging, VolumeCapability capability) {
        return NodeStageVolumeRequest.newBuilder().setVolumeId(volumeId).setStagingTargetPath(staging.toString())
                .setVolumeCapability(capability).build();
    }

    static NodePublishVolumeRequest publish(String volumeId, Path staging, Path target, VolumeCapability capability) {
        return NodePublishVolumeRequest.newBuilder().setVolumeId(volumeId).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(capability).build();
    }

    /** The call fails with {@code code}; returns the status for a look at its message. */
    static Status fails(Status.Code code, Executable call) {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
        assertEquals(code, e.getStatus().getCode(), () -> "status: " + e.getStatus());
        return e.getStatus();
    }
}
