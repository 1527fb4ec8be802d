package io.csi4j.cli.reliability;

import io.csi4j.proto.csi.ControllerPublishVolumeRequest;
import io.csi4j.proto.csi.ControllerUnpublishVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.NodePublishVolumeRequest;
import io.csi4j.proto.csi.NodeStageVolumeRequest;
import io.csi4j.proto.csi.NodeUnpublishVolumeRequest;
import io.csi4j.proto.csi.NodeUnstageVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A volume a {@link RecordLog} writes into, driven as kubelet would: an ext4 filesystem volume (the log is a file
 * in its mount) or a block volume (the log is the device). Created, attached, staged and published once; after a
 * power cut (a reboot: the node's mounts are gone) staged and published again.
 */
final class LogVolume {
    final String name;
    final boolean block;
    final Path staging, target;
    String id;
    long capacity;

    LogVolume(String name, boolean block, Path nodeDir) {
        this.name = name;
        this.block = block;
        this.staging = nodeDir.resolve(name).resolve("staging");
        this.target = nodeDir.resolve(name).resolve("target");
    }

    VolumeCapability capability() {
        var mode = VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER);
        var b = VolumeCapability.newBuilder().setAccessMode(mode);
        return block ? b.setBlock(VolumeCapability.BlockVolume.getDefaultInstance()).build()
                : b.setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4")).build();
    }

    /** Where the log lives: the device (block) or a file in the mount. */
    Path log(String file) {
        return block ? target : target.resolve(file);
    }

    void create(Rpc rpc, long bytes) {
        var volume = rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName(name).setCapacityRange(Rpc.atLeast(bytes))
                .addVolumeCapabilities(capability()).build()).getVolume();
        id = volume.getVolumeId();
        capacity = volume.getCapacityBytes();
        rpc.controller().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id)
                .setNodeId(World.NODE).setVolumeCapability(capability()).build());
    }

    /** NodeStage and NodePublish, as kubelet does at a pod's start and after a reboot. */
    void mount(Rpc rpc) throws IOException {
        Files.createDirectories(staging);
        if (!block) Files.createDirectories(target);
        rpc.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging.toString()).setVolumeCapability(capability()).build());
        rpc.node().nodePublishVolume(NodePublishVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging.toString())
                .setTargetPath(target.toString()).setVolumeCapability(capability()).build());
    }

    void unmount(Rpc rpc) {
        rpc.node().nodeUnpublishVolume(NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target.toString()).build());
        rpc.node().nodeUnstageVolume(NodeUnstageVolumeRequest.newBuilder().setVolumeId(id)
                .setStagingTargetPath(staging.toString()).build());
    }

    void delete(Rpc rpc) {
        rpc.controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                .setNodeId(World.NODE).build());
        rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
    }
}
