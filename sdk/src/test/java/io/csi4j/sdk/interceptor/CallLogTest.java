package io.csi4j.sdk.interceptor;

import static io.csi4j.sdk.testing.Requests.create;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.sdk.testing.LogCapture;
import io.csi4j.sdk.testing.Requests;
import io.csi4j.sdk.testing.TestPlugin;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CallLogTest {
    @TempDir
    Path dir;

    private static List<String> callLines(LogCapture log) {
        return log.text().lines().filter(l -> l.contains(" call: ")).toList();
    }

    @Test
    void oneLinePerCallWithMethodCodeAndDurationAndNoPayloadAtInfo() throws Exception {
        try (LogCapture log = new LogCapture(Level.INFO); TestPlugin plugin = TestPlugin.start(dir)) {
            IdentityGrpc.newBlockingStub(plugin.channel()).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
            var controller = ControllerGrpc.newBlockingStub(plugin.channel());
            controller.createVolume(create("logged", "secretless", "x"));
            assertThrows(StatusRuntimeException.class, () -> controller.withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                    .createVolume(create("cancelled", "slow_ms", "5000", "quiet_cancel", "yes")));
            Requests.waitUntil(() -> callLines(log).size() == 3);
            List<String> lines = callLines(log);
            assertTrue(lines.get(0).matches(".*INFO  call: csi\\.v1\\.Identity/GetPluginInfo OK \\d+\\.\\dms$"), lines.get(0));
            assertTrue(lines.get(1).matches(".*INFO  call: csi\\.v1\\.Controller/CreateVolume OK \\d+\\.\\dms$"), lines.get(1));
            assertTrue(lines.get(2).matches(".*INFO  call: csi\\.v1\\.Controller/CreateVolume CANCELLED \\d+\\.\\dms .*"), lines.get(2));
            assertEquals(0, log.text().lines().filter(l -> l.contains(" request ") || l.contains(" response ")).count());
        }
    }

    @Test
    void debugAddsTheRedactedRequestAndResponse() throws Exception {
        try (LogCapture log = new LogCapture(Level.FINE); TestPlugin plugin = TestPlugin.start(dir)) {
            ControllerGrpc.newBlockingStub(plugin.channel())
                    .createVolume(create("debugged").toBuilder().putSecrets("token", "tok-123456").build());
            String text = log.text();
            assertTrue(text.contains("DEBUG call: csi.v1.Controller/CreateVolume request name: \"debugged\""), text);
            assertTrue(text.contains("secrets { key: \"token\" value: \"***\" }"), text);
            assertTrue(text.contains("DEBUG call: csi.v1.Controller/CreateVolume response volume { capacity_bytes: 1073741824 volume_id: \"vol-1\" }"), text);
            assertTrue(!text.contains("tok-123456"), text);
        }
    }
}
