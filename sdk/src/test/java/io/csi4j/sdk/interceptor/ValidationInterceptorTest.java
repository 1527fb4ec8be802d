package io.csi4j.sdk.interceptor;

import static io.csi4j.sdk.testing.Requests.create;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.sdk.testing.LogCapture;
import io.csi4j.sdk.testing.TestPlugin;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ValidationInterceptorTest {
    @TempDir
    Path dir;

    private static Status fail(Runnable call) {
        return assertThrows(StatusRuntimeException.class, call::run).getStatus();
    }

    @Test
    void invalidRequestsAreRefusedWithTheFieldNamedAndNeverReachTheService() throws Exception {
        try (TestPlugin plugin = TestPlugin.start(dir)) {
            var controller = ControllerGrpc.newBlockingStub(plugin.channel());
            Status noName = fail(() -> controller.createVolume(create("").toBuilder().clearName().build()));
            assertEquals(Status.Code.INVALID_ARGUMENT, noName.getCode());
            assertEquals("CreateVolume: name is REQUIRED", noName.getDescription());
            Status nothing = fail(() -> controller.createVolume(CreateVolumeRequest.getDefaultInstance()));
            assertEquals("CreateVolume: name is REQUIRED; volume_capabilities is REQUIRED", nothing.getDescription());
            Status longName = fail(() -> controller.createVolume(create("x".repeat(200))));
            assertEquals("CreateVolume: name exceeds 128 bytes (200)", longName.getDescription());
            Status noId = fail(() -> controller.deleteVolume(DeleteVolumeRequest.getDefaultInstance()));
            assertEquals("DeleteVolume: volume_id is REQUIRED", noId.getDescription());
            assertEquals(0, plugin.controller.createInvocations.get(), "the service never saw an invalid request");
            assertTrue(controller.createVolume(create("fine")).getVolume().getVolumeId().startsWith("vol-"));
            assertEquals(1, plugin.controller.createInvocations.get());
        }
    }

    @Test
    void anInvalidResponseIsAPluginBugAnsweredAsInternalAndLogged() throws Exception {
        try (LogCapture log = new LogCapture(Level.INFO);
             TestPlugin plugin = TestPlugin.start(dir, b -> b.validation(ValidationInterceptor.forCsi().withResponseValidation(true)))) {
            var controller = ControllerGrpc.newBlockingStub(plugin.channel());
            Status status = fail(() -> controller.createVolume(create("broken", "bad_response", "yes")));
            assertEquals(Status.Code.INTERNAL, status.getCode());
            assertEquals("CreateVolume: the plugin produced an invalid response: volume.volume_id is REQUIRED", status.getDescription());
            assertTrue(log.text().contains("plugin bug: CreateVolume response breaks the spec: volume.volume_id is REQUIRED"), log.text());
            assertTrue(controller.createVolume(create("fine")).hasVolume(), "valid responses pass");
        }
    }

    @Test
    void withoutResponseValidationTheResponseGoesOutAsIs() throws Exception {
        try (TestPlugin plugin = TestPlugin.start(dir)) {
            var response = ControllerGrpc.newBlockingStub(plugin.channel()).createVolume(create("broken", "bad_response", "yes"));
            assertEquals("", response.getVolume().getVolumeId());
        }
    }
}
