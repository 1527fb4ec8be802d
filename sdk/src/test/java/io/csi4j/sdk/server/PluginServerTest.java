package io.csi4j.sdk.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.sdk.example.ExampleIdentity;
import io.csi4j.sdk.testing.Requests;
import io.csi4j.sdk.testing.TestPlugin;
import static io.csi4j.sdk.testing.Requests.create;
import static io.csi4j.sdk.testing.Requests.waitUntil;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PluginServerTest {
    @TempDir
    Path dir;

    private static List<Path> entries(Path dir) throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            return list.toList();
        }
    }

    @Test
    void servesOnAUnixSocketWithMode0600AndLeavesNothingElseNextToIt() throws Exception {
        Path nested = dir.resolve("plugins/example.csi4j.io");
        try (TestPlugin plugin = TestPlugin.start(nested)) {
            Path socket = nested.resolve("csi.sock");
            assertTrue(SocketFile.isSocket(socket));
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
            assertEquals(List.of(socket), entries(nested), "no staging directory may stay next to the socket");
            var info = IdentityGrpc.newBlockingStub(plugin.channel()).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
            assertEquals(ExampleIdentity.NAME, info.getName());
        }
        assertFalse(Files.exists(nested.resolve("csi.sock")), "socket removed on shutdown");
        assertEquals(List.of(), entries(nested));
    }

    @Test
    void socketModeIsConfigurable() throws Exception {
        try (TestPlugin plugin = TestPlugin.start(dir, b -> b.socketMode(0660))) {
            assertEquals("rw-rw----", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("csi.sock"))));
        }
        assertThrows(IllegalArgumentException.class, () -> PluginServer.builder().socketMode(01777));
    }

    @Test
    void removesAStaleSocketLeftByADeadServer() throws Exception {
        Path socket = dir.resolve("csi.sock");
        try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            dead.bind(UnixDomainSocketAddress.of(socket));
        } // closed: the file stays, nobody listens
        assertTrue(SocketFile.isSocket(socket));
        try (TestPlugin plugin = TestPlugin.start(dir)) {
            var info = IdentityGrpc.newBlockingStub(plugin.channel()).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
            assertEquals(ExampleIdentity.NAME, info.getName());
        }
    }

    @Test
    void refusesARegularFileAtTheSocketPathAndKeepsIt() throws Exception {
        Path socket = dir.resolve("csi.sock");
        Files.writeString(socket, "precious data");
        var e = assertThrows(IOException.class, () -> TestPlugin.start(dir));
        assertTrue(e.getMessage().contains("is not a socket"), e.getMessage());
        assertEquals("precious data", Files.readString(socket));
        assertEquals(List.of(socket), entries(dir));
    }

    @Test
    void refusesToStartWhileAnotherServerListensOnTheSocket() throws Exception {
        try (TestPlugin first = TestPlugin.start(dir)) {
            var e = assertThrows(IOException.class, () -> TestPlugin.start(dir));
            assertTrue(e.getMessage().contains("another server is listening on " + dir.resolve("csi.sock")), e.getMessage());
            var info = IdentityGrpc.newBlockingStub(first.channel()).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
            assertEquals(ExampleIdentity.NAME, info.getName(), "the first server is untouched");
            assertEquals(List.of(dir.resolve("csi.sock")), entries(dir));
        }
    }

    @Test
    void servesTwoEndpointsFromOneProcessEachWithItsOwnServices() throws Exception {
        Endpoint addons = new Endpoint.Unix(dir.resolve("csi-addons.sock"));
        try (TestPlugin plugin = TestPlugin.start(dir, b -> b.listen(addons, TestPlugin.addonsIdentity()))) {
            assertEquals(List.of(plugin.endpoint, addons), plugin.server.endpoints());
            var csi = IdentityGrpc.newBlockingStub(plugin.channel());
            var addonsIdentity = io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(plugin.channel(addons));
            assertEquals(ExampleIdentity.NAME, csi.getPluginInfo(GetPluginInfoRequest.getDefaultInstance()).getName());
            assertEquals(ExampleIdentity.NAME, addonsIdentity.getIdentity(
                    io.csi4j.proto.addons.identity.GetIdentityRequest.getDefaultInstance()).getName());
            var wrongSocket = io.csi4j.proto.addons.identity.IdentityGrpc.newBlockingStub(plugin.channel());
            var e = assertThrows(StatusRuntimeException.class, () -> wrongSocket.getIdentity(
                    io.csi4j.proto.addons.identity.GetIdentityRequest.getDefaultInstance()));
            assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode());
        }
        assertEquals(List.of(), entries(dir));
    }

    @Test
    void aFailedSecondEndpointLeavesNothingBound() throws Exception {
        Path blocker = dir.resolve("csi-addons.sock");
        Files.writeString(blocker, "not a socket");
        Endpoint addons = new Endpoint.Unix(blocker);
        assertThrows(IOException.class, () -> TestPlugin.start(dir, b -> b.listen(addons, TestPlugin.addonsIdentity())));
        assertEquals(List.of(blocker), entries(dir), "the first endpoint's socket was removed again");
    }

    @Test
    void gracefulShutdownLetsTheCallInFlightFinishThenRemovesTheSocket() throws Exception {
        TestPlugin plugin = TestPlugin.start(dir, b -> b.shutdownGrace(Duration.ofSeconds(10)));
        try {
            ManagedChannel channel = plugin.channel();
            var slow = Requests.async(() -> ControllerGrpc.newBlockingStub(channel)
                    .createVolume(create("slow-one", "slow_ms", "1500")));
            waitUntil(() -> plugin.controller.createInvocations.get() == 1);
            long start = System.nanoTime();
            plugin.server.shutdown();
            CreateVolumeResponse response = slow.get(10, TimeUnit.SECONDS);
            assertTrue(response.getVolume().getVolumeId().startsWith("vol-"));
            assertTrue(plugin.server.awaitTermination(Duration.ofSeconds(10)));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(9), "stopped once the call was done");
            assertFalse(Files.exists(dir.resolve("csi.sock")));
            // and nobody is accepting any more
            var fresh = Channels.connect(plugin.endpoint);
            try {
                var e = assertThrows(StatusRuntimeException.class, () -> IdentityGrpc.newBlockingStub(fresh)
                        .withDeadlineAfter(2, TimeUnit.SECONDS).getPluginInfo(GetPluginInfoRequest.getDefaultInstance()));
                assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode());
            } finally {
                fresh.shutdownNow();
            }
        } finally {
            plugin.close();
        }
    }

    @Test
    void shutdownGraceBoundsHowLongACallMayRun() throws Exception {
        TestPlugin plugin = TestPlugin.start(dir, b -> b.shutdownGrace(Duration.ofMillis(300)));
        try {
            ManagedChannel channel = plugin.channel();
            var slow = Requests.async(() -> ControllerGrpc.newBlockingStub(channel)
                    .createVolume(create("too-slow", "slow_ms", "60000")));
            waitUntil(() -> plugin.controller.createInvocations.get() == 1);
            long start = System.nanoTime();
            plugin.server.shutdown();
            assertTrue(plugin.server.awaitTermination(Duration.ofSeconds(10)));
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(8));
            var e = assertThrows(Exception.class, () -> slow.get(10, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof StatusRuntimeException, String.valueOf(e.getCause()));
            assertFalse(Files.exists(dir.resolve("csi.sock")));
        } finally {
            plugin.close();
        }
    }

    @Test
    void servesOnLoopbackTcpWithARealPort() throws Exception {
        PluginServer server = PluginServer.builder()
                .listen(Endpoint.parse("tcp://:0"), new ExampleIdentity()).build().start();
        try {
            Endpoint.Tcp bound = (Endpoint.Tcp) server.endpoints().getFirst();
            assertEquals("127.0.0.1", bound.host());
            assertTrue(bound.port() > 0);
            ManagedChannel channel = Channels.connect(bound);
            try {
                assertEquals(ExampleIdentity.NAME, IdentityGrpc.newBlockingStub(channel)
                        .getPluginInfo(GetPluginInfoRequest.getDefaultInstance()).getName());
            } finally {
                channel.shutdownNow();
            }
        } finally {
            server.close();
        }
    }

    /** The methods named in onTransportThread run on the event loop, interceptors included; the others on virtual threads. */
    @Test
    void listedMethodsRunOnTheTransportThreadTheOthersOnVirtualThreads() throws Exception {
        var threads = new java.util.concurrent.ConcurrentHashMap<String, Thread>();
        var identity = new IdentityGrpc.IdentityImplBase() {
            @Override
            public void getPluginInfo(GetPluginInfoRequest req, io.grpc.stub.StreamObserver<io.csi4j.proto.csi.GetPluginInfoResponse> out) {
                threads.put("GetPluginInfo", Thread.currentThread());
                out.onNext(io.csi4j.proto.csi.GetPluginInfoResponse.newBuilder().setName("t.csi4j.io").setVendorVersion("1").build());
                out.onCompleted();
            }

            @Override
            public void probe(io.csi4j.proto.csi.ProbeRequest req, io.grpc.stub.StreamObserver<io.csi4j.proto.csi.ProbeResponse> out) {
                threads.put("Probe", Thread.currentThread());
                out.onNext(io.csi4j.proto.csi.ProbeResponse.getDefaultInstance());
                out.onCompleted();
            }
        };
        PluginServer server = PluginServer.builder().listen(Endpoint.parse("unix://" + dir.resolve("csi.sock")), identity)
                .onTransportThread(java.util.Set.of(IdentityGrpc.getGetPluginInfoMethod().getFullMethodName()))
                .build().start();
        ManagedChannel channel = Channels.connect(server.endpoints().getFirst());
        try {
            var stub = IdentityGrpc.newBlockingStub(channel);
            assertEquals("t.csi4j.io", stub.getPluginInfo(GetPluginInfoRequest.getDefaultInstance()).getName());
            stub.probe(io.csi4j.proto.csi.ProbeRequest.getDefaultInstance());
            assertFalse(threads.get("GetPluginInfo").isVirtual());
            assertTrue(threads.get("GetPluginInfo").getName().startsWith("csi4j-io"), threads.get("GetPluginInfo").getName());
            assertTrue(threads.get("Probe").isVirtual(), threads.get("Probe").toString());
            // the standard chain still ran for the call on the transport thread
            assertEquals(1, server.metrics().handledCount(IdentityGrpc.getGetPluginInfoMethod().getFullMethodName(), Status.Code.OK));
        } finally {
            channel.shutdownNow();
            server.close();
        }
    }
}
