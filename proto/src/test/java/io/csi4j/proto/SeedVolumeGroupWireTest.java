package io.csi4j.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.addons.volumegroup.ControllerGrpc;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupResponse;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipRequest;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipResponse;
import io.csi4j.proto.addons.volumegroup.VolumeGroup;
import io.csi4j.proto.csi.Topology;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeContentSource;
import io.csi4j.proto.testing.vgseed.VgVolume;
import io.csi4j.proto.testing.vgseed.VgVolumeContentSource;
import io.csi4j.proto.testing.vgseed.VolumeGroupSeedProto;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client built on the earlier VolumeGroup draft (seeds 000/003, test proto vgseed) calls a server
 * built on the CSI-Addons volumegroup.proto over a real UNIX socket: same method paths, and VgVolume
 * reads what csi.v1.Volume wrote.
 */
class SeedVolumeGroupWireTest {

    @TempDir Path dir;
    private final List<com.google.protobuf.Message> received = new CopyOnWriteArrayList<>();
    private EventLoopGroup loop;
    private Server server;
    private ManagedChannel channel;

    static final Volume MEMBER = Volume.newBuilder()
            .setCapacityBytes(1L << 30)
            .setVolumeId("vol-1")
            .putVolumeContext("fs", "xfs")
            .setContentSource(VolumeContentSource.newBuilder()
                    .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId("snap-1")))
            .addAccessibleTopology(Topology.newBuilder().putSegments("topology.csi4j.io/node", "n1"))
            .build();

    /** Answers with the group it was asked for; remembers each request as the server decoded it. */
    final class GroupController extends ControllerGrpc.ControllerImplBase {
        @Override
        public void createVolumeGroup(CreateVolumeGroupRequest request, StreamObserver<CreateVolumeGroupResponse> response) {
            received.add(request);
            response.onNext(CreateVolumeGroupResponse.newBuilder().setVolumeGroup(group("vg-" + request.getName())).build());
            response.onCompleted();
        }

        @Override
        public void modifyVolumeGroupMembership(ModifyVolumeGroupMembershipRequest request,
                StreamObserver<ModifyVolumeGroupMembershipResponse> response) {
            received.add(request);
            response.onNext(ModifyVolumeGroupMembershipResponse.newBuilder()
                    .setVolumeGroup(group(request.getVolumeGroupId())).build());
            response.onCompleted();
        }

        private VolumeGroup group(String id) {
            return VolumeGroup.newBuilder().setVolumeGroupId(id).putVolumeGroupContext("k", "v").addVolumes(MEMBER).build();
        }
    }

    @BeforeEach
    void start() throws Exception {
        Path socket = dir.resolve("csi-addons.sock");
        loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        server = NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(socket))
                .channelType(NioServerDomainSocketChannel.class)
                .bossEventLoopGroup(loop).workerEventLoopGroup(loop)
                .withChildOption(ChannelOption.SO_KEEPALIVE, null)
                .addService(new GroupController())
                .build().start();
        channel = NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket), InsecureChannelCredentials.create())
                .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
                .eventLoopGroup(loop)
                .withOption(ChannelOption.SO_KEEPALIVE, null)
                .build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (channel != null) channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        if (server != null) server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        if (loop != null) loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }

    @Test
    void bothVariantsUseTheSameMethodPaths() {
        List<MethodDescriptor<?, ?>> addons = List.of(ControllerGrpc.getCreateVolumeGroupMethod(),
                ControllerGrpc.getModifyVolumeGroupMembershipMethod(), ControllerGrpc.getDeleteVolumeGroupMethod(),
                ControllerGrpc.getListVolumeGroupsMethod(), ControllerGrpc.getControllerGetVolumeGroupMethod());
        List<MethodDescriptor<?, ?>> seeds = List.of(
                io.csi4j.proto.testing.vgseed.ControllerGrpc.getCreateVolumeGroupMethod(),
                io.csi4j.proto.testing.vgseed.ControllerGrpc.getModifyVolumeGroupMembershipMethod(),
                io.csi4j.proto.testing.vgseed.ControllerGrpc.getDeleteVolumeGroupMethod(),
                io.csi4j.proto.testing.vgseed.ControllerGrpc.getListVolumeGroupsMethod(),
                io.csi4j.proto.testing.vgseed.ControllerGrpc.getControllerGetVolumeGroupMethod());
        assertEquals(addons.stream().map(MethodDescriptor::getFullMethodName).toList(),
                seeds.stream().map(MethodDescriptor::getFullMethodName).toList());
        assertEquals("volumegroup.Controller/CreateVolumeGroup", addons.getFirst().getFullMethodName());
    }

    @Test
    void seedClientIsServedByTheCsiAddonsServer() {
        var client = io.csi4j.proto.testing.vgseed.ControllerGrpc.newBlockingStub(channel)
                .withDeadlineAfter(10, TimeUnit.SECONDS);

        var created = client.createVolumeGroup(io.csi4j.proto.testing.vgseed.CreateVolumeGroupRequest.newBuilder()
                .setName("g1").putParameters("tier", "gold").putSecrets("token", "s3cr3t").build());

        var asServed = (CreateVolumeGroupRequest) received.getFirst();
        assertEquals("g1", asServed.getName());
        assertEquals(Map.of("tier", "gold"), asServed.getParametersMap());
        assertEquals(Map.of("token", "s3cr3t"), asServed.getSecretsMap());
        assertEquals(List.of(), asServed.getVolumeIdsList());   // the seed has no volume_ids

        assertEquals("vg-g1", created.getVolumeGroup().getVolumeGroupId());
        assertEquals(Map.of("k", "v"), created.getVolumeGroup().getVolumeGroupContextMap());
        VgVolume member = created.getVolumeGroup().getVolumes(0);
        assertEquals(MEMBER.getCapacityBytes(), member.getCapacityBytes());
        assertEquals("vol-1", member.getVolumeId());
        assertEquals(Map.of("fs", "xfs"), member.getVolumeContextMap());
        assertEquals(VgVolumeContentSource.TypeCase.SNAPSHOT, member.getContentSource().getTypeCase());
        assertEquals("snap-1", member.getContentSource().getSnapshot().getSnapshotId());
        assertEquals(Map.of("topology.csi4j.io/node", "n1"), member.getAccessibleTopology(0).getSegmentsMap());
        assertTrue(member.getUnknownFields().asMap().isEmpty(), "VgVolume left fields it did not know");
        assertEquals(MEMBER.toByteString(), member.toByteString());

        client.modifyVolumeGroupMembership(io.csi4j.proto.testing.vgseed.ModifyVolumeGroupMembershipRequest.newBuilder()
                .setVolumeGroupId("vg-g1").addVolumeIds("vol-1").addVolumeIds("vol-2").build());
        var modify = (ModifyVolumeGroupMembershipRequest) received.get(1);
        assertEquals(List.of("vol-1", "vol-2"), modify.getVolumeIdsList());
        assertEquals(Map.of(), modify.getParametersMap());      // the seed has no parameters
    }

    @Test
    void seedMarksSecretsWithItsOwnOption() {
        var secrets = io.csi4j.proto.testing.vgseed.CreateVolumeGroupRequest.getDescriptor().findFieldByName("secrets");
        assertTrue(secrets.getOptions().getExtension(VolumeGroupSeedProto.vgCsiSecret));
        assertEquals(1101, VolumeGroupSeedProto.vgCsiSecret.getDescriptor().getNumber());
    }
}
