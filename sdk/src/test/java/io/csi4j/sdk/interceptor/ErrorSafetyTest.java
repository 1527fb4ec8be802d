package io.csi4j.sdk.interceptor;

import static io.csi4j.sdk.testing.Requests.create;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeResponse;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import io.csi4j.sdk.testing.LogCapture;
import io.csi4j.sdk.testing.TestPlugin;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ErrorSafetyTest {
    @TempDir
    Path dir;

    static final Metadata.Key<byte[]> DETAILS = Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER);
    static final Metadata.Key<String> CUSTOM = Metadata.Key.of("x-leak", Metadata.ASCII_STRING_MARSHALLER);

    @Test
    void anUnexpectedExceptionBecomesInternalWithoutItsTextOrStackButWithALoggedReference() throws Exception {
        try (LogCapture log = new LogCapture(Level.INFO); TestPlugin plugin = TestPlugin.start(dir)) {
            var e = assertThrows(StatusRuntimeException.class, () ->
                    ControllerGrpc.newBlockingStub(plugin.channel()).createVolume(create("x", "fail", "yes")));
            Status status = e.getStatus();
            assertEquals(Status.Code.INTERNAL, status.getCode());
            Matcher ref = Pattern.compile("^internal error in the plugin \\[ref ([0-9a-f]{8})\\]; see the plugin log$")
                    .matcher(status.getDescription());
            assertTrue(ref.matches(), status.getDescription());
            assertFalse(status.getDescription().contains("exploded"));
            assertFalse(status.getDescription().contains("IllegalStateException"));
            assertFalse(status.getDescription().contains(" at "));
            assertNull(e.getTrailers().get(DETAILS));
            String line = log.text().lines().filter(l -> l.contains("plugin bug [ref " + ref.group(1) + "]")).findFirst().orElseThrow();
            assertTrue(line.contains("java.lang.IllegalStateException: disk exploded while handling name: \"x\""), line);
            assertTrue(line.contains(" at io.csi4j.sdk.example.ExampleController.createVolume"), line);
        }
    }

    /** A Controller whose DeleteVolume fails in the way {@code failure} decides. */
    private static PluginServer serve(Endpoint endpoint, Consumer<StreamObserver<DeleteVolumeResponse>> failure) throws Exception {
        var service = new ControllerGrpc.ControllerImplBase() {
            @Override
            public void deleteVolume(DeleteVolumeRequest request, StreamObserver<DeleteVolumeResponse> response) {
                failure.accept(response);
            }
        };
        return PluginServer.builder().listen(endpoint, service).build().start();
    }

    private Status callDelete(Consumer<StreamObserver<DeleteVolumeResponse>> failure, Metadata[] trailers) throws Exception {
        Endpoint endpoint = new Endpoint.Unix(dir.resolve("e" + System.nanoTime() + ".sock"));
        PluginServer server = serve(endpoint, failure);
        ManagedChannel channel = Channels.connect(endpoint);
        try {
            var e = assertThrows(StatusRuntimeException.class, () -> ControllerGrpc.newBlockingStub(channel)
                    .deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId("vol-1").build()));
            trailers[0] = e.getTrailers();
            return e.getStatus();
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.close();
        }
    }

    @Test
    void csiExceptionsKeepTheirCodeAndMessageWhetherThrownOrPassedToOnError() throws Exception {
        Metadata[] trailers = new Metadata[1];
        Status thrown = callDelete(r -> { throw CsiException.failedPrecondition("volume vol-1 is in group g-1"); }, trailers);
        assertEquals(Status.Code.FAILED_PRECONDITION, thrown.getCode());
        assertEquals("volume vol-1 is in group g-1", thrown.getDescription());
        Status passed = callDelete(r -> r.onError(CsiException.notFound("no volume vol-1")), trailers);
        assertEquals(Status.Code.NOT_FOUND, passed.getCode());
        assertEquals("no volume vol-1", passed.getDescription());
        Status bug = callDelete(r -> r.onError(new NullPointerException("secret-ish detail")), trailers);
        assertEquals(Status.Code.INTERNAL, bug.getCode());
        assertFalse(bug.getDescription().contains("secret-ish"));
    }

    @Test
    void detailsAndCustomTrailersNeverLeave() throws Exception {
        Metadata[] trailers = new Metadata[1];
        Status status = callDelete(r -> {
            Metadata extra = new Metadata();
            extra.put(DETAILS, new byte[] {8, 5, 18, 3, 'x', 'y', 'z'});
            extra.put(CUSTOM, "internal detail");
            r.onError(Status.NOT_FOUND.withDescription("no volume vol-1").asRuntimeException(extra));
        }, trailers);
        assertEquals(Status.Code.NOT_FOUND, status.getCode());
        assertEquals("no volume vol-1", status.getDescription());
        assertNull(trailers[0].get(DETAILS), "status.details must be empty");
        assertNull(trailers[0].get(CUSTOM));
    }
}
