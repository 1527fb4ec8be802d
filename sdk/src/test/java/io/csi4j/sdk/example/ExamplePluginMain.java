package io.csi4j.sdk.example;

import io.csi4j.sdk.PluginLogging;
import io.csi4j.sdk.paging.PageTokens;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import java.time.Duration;
import java.util.Optional;
import java.util.logging.Level;

/**
 * The example plugin as a process: {@code CSI_ENDPOINT} or {@code --endpoint}, optional
 * {@code --addons-endpoint}, {@code --metrics-address}, {@code --grace-ms}. Exits 0 after SIGTERM/SIGINT.
 */
public final class ExamplePluginMain {
    public static void main(String[] args) throws Exception {
        PluginLogging.install(Level.INFO);
        Optional<String> endpoint = Optional.empty();
        String addons = null;
        String metrics = null;
        long graceMs = 10_000;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--endpoint" -> endpoint = Optional.of(args[++i]);
                case "--addons-endpoint" -> addons = args[++i];
                case "--metrics-address" -> metrics = args[++i];
                case "--grace-ms" -> graceMs = Long.parseLong(args[++i]);
                default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        var builder = PluginServer.builder()
                .listen(Endpoint.resolve(endpoint, System.getenv()), new ExampleIdentity(),
                        new ExampleController(PageTokens.withRandomKey()))
                .metricsAddress(metrics)
                .shutdownGrace(Duration.ofMillis(graceMs));
        if (addons != null) builder.listen(Endpoint.parse(addons), new ExampleAddonsIdentity());
        PluginServer server = builder.build().start().stopOnSignals();
        server.awaitTermination();
    }
}
