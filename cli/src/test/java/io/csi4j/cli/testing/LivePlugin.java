package io.csi4j.cli.testing;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import io.grpc.BindableService;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The real local driver served on a real UNIX socket in a temporary directory, for the cli to call. With
 * {@code addons}, its CSI-Addons services are served on {@code csi-addons.sock} beside it.
 */
public final class LivePlugin implements AutoCloseable {
    // one line per call from the plugin's call log would bury the test output; JUL holds loggers weakly
    private static final java.util.logging.Logger SDK = java.util.logging.Logger.getLogger("io.csi4j.sdk");

    static {
        SDK.setLevel(java.util.logging.Level.WARNING);
    }

    private final Path dir;
    private final Driver driver;
    private final PluginServer server;
    private final Endpoint csi;
    private final Endpoint addons;

    private LivePlugin(Path dir, Driver driver, PluginServer server, Endpoint csi, Endpoint addons) {
        this.dir = dir;
        this.driver = driver;
        this.server = server;
        this.csi = csi;
        this.addons = addons;
    }

    public static LivePlugin start(Path dir, EngineKind engine, boolean addons) {
        var config = DriverConfig.defaults(dir.resolve("data"), "node-1").withEngine(engine);
        Driver driver = Driver.open(config);
        try {
            Endpoint csi = Endpoint.parse("unix://" + config.dataDir().resolve("csi.sock"));
            var builder = PluginServer.builder().listen(csi, driver.csiServices().toArray(BindableService[]::new));
            Endpoint addonsEndpoint = null;
            if (addons) {
                addonsEndpoint = Endpoint.parse("unix://" + config.dataDir().resolve("csi-addons.sock"));
                builder.listen(addonsEndpoint, driver.addonsServices().toArray(BindableService[]::new));
            }
            return new LivePlugin(dir, driver, builder.build().start(), csi, addonsEndpoint);
        } catch (IOException e) {
            driver.close();
            throw new UncheckedIOException(e);
        } catch (RuntimeException e) {
            driver.close();
            throw e;
        }
    }

    public String endpoint() {
        return csi.uri();
    }

    public String addonsEndpoint() {
        return addons.uri();
    }

    public Driver driver() {
        return driver;
    }

    public Path dir() {
        return dir;
    }

    public boolean anythingMountedUnder(Path p) {
        return !MountTable.read().under(p).isEmpty();
    }

    @Override
    public void close() {
        try {
            server.shutdownNow();
            server.close();
        } finally {
            driver.close();
        }
    }
}
