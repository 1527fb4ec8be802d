package io.csi4j.sdk.interceptor;

import static io.csi4j.sdk.testing.Requests.create;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.sdk.testing.TestPlugin;
import io.grpc.StatusRuntimeException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetricsTest {
    @TempDir
    Path dir;

    private static final String CREATE = "grpc_service=\"csi.v1.Controller\",grpc_method=\"CreateVolume\"";

    private static HttpResponse<String> get(InetSocketAddress address, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + address.getPort() + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static long value(String text, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(text);
        if (!m.find()) throw new AssertionError("no series " + series + " in:\n" + text);
        return (long) Double.parseDouble(m.group(1));
    }

    @Test
    void countsCodesAndLatenciesPerMethodAndServesThemAsPrometheusText() throws Exception {
        try (TestPlugin plugin = TestPlugin.start(dir, b -> b.metricsAddress("127.0.0.1:0"))) {
            var controller = ControllerGrpc.newBlockingStub(plugin.channel());
            controller.createVolume(create("m-1"));
            controller.createVolume(create("m-2", "slow_ms", "30"));
            assertThrows(StatusRuntimeException.class, () -> controller.createVolume(CreateVolumeRequest.getDefaultInstance()));
            IdentityGrpc.newBlockingStub(plugin.channel()).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());

            HttpResponse<String> response = get(plugin.server.metricsAddress(), "/metrics");
            assertEquals(200, response.statusCode());
            assertTrue(response.headers().firstValue("Content-Type").orElseThrow().startsWith("text/plain; version=0.0.4"));
            String text = response.body();
            assertEquals(3, value(text, "grpc_server_started_total{" + CREATE + "}"));
            assertEquals(2, value(text, "grpc_server_handled_total{" + CREATE + ",grpc_code=\"OK\"}"));
            assertEquals(1, value(text, "grpc_server_handled_total{" + CREATE + ",grpc_code=\"INVALID_ARGUMENT\"}"));
            assertEquals(0, value(text, "grpc_server_in_flight{" + CREATE + "}"));
            assertEquals(3, value(text, "grpc_server_handling_seconds_count{" + CREATE + "}"));
            assertEquals(3, value(text, "grpc_server_handling_seconds_bucket{" + CREATE + ",le=\"+Inf\"}"));
            // the 30 ms call is above the 25 ms bucket, and every call is below 10 s; buckets are cumulative
            assertTrue(value(text, "grpc_server_handling_seconds_bucket{" + CREATE + ",le=\"0.025\"}") <= 2);
            assertEquals(3, value(text, "grpc_server_handling_seconds_bucket{" + CREATE + ",le=\"10\"}"));
            assertTrue(text.contains("# TYPE grpc_server_handling_seconds histogram"));
            assertEquals(1, value(text, "grpc_server_handled_total{grpc_service=\"csi.v1.Identity\",grpc_method=\"GetPluginInfo\",grpc_code=\"OK\"}"));
            assertEquals(plugin.server.metrics().handledCount("csi.v1.Controller/CreateVolume", io.grpc.Status.Code.OK), 2);

            assertEquals(404, get(plugin.server.metricsAddress(), "/other").statusCode());
        }
    }

    @Test
    void everyHistogramIsMonotonic() {
        CallMetrics metrics = new CallMetrics();
        long[] nanos = {500_000, 3_000_000, 40_000_000, 2_000_000_000L, 400_000_000_000L};
        for (long n : nanos) {
            metrics.started("s/M");
            metrics.handled("s/M", io.grpc.Status.Code.OK, n);
        }
        long previous = -1;
        for (String line : metrics.prometheusText().lines().filter(l -> l.startsWith("grpc_server_handling_seconds_bucket")).toList()) {
            long v = Long.parseLong(line.substring(line.lastIndexOf(' ') + 1));
            assertTrue(v >= previous, line);
            previous = v;
        }
        assertEquals(5, previous, "+Inf holds every call, also the one above the last bound");
    }

    @Test
    void aPluginsOwnMetricsAreAppendedAtEveryScrape() {
        CallMetrics metrics = new CallMetrics();
        long[] count = {0};
        metrics.include(() -> "plugin_things_total " + (++count[0]) + "\n");
        assertTrue(metrics.prometheusText().endsWith("plugin_things_total 1\n"));
        assertTrue(metrics.prometheusText().endsWith("plugin_things_total 2\n"), "rendered anew each time");
    }
}
