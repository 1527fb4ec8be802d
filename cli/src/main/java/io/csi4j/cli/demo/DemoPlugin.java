package io.csi4j.cli.demo;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.engine.EngineKind;
import io.csi4j.driver.engine.Pool;
import io.csi4j.driver.os.MountInfo;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.driver.storage.DataDir;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import io.grpc.BindableService;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * The plugin the demo talks to: the local driver in this process, on a fresh data directory with its own
 * XFS pool image (reflink), serving CSI on {@code <dir>/data/csi.sock} and CSI-Addons on
 * {@code csi-addons.sock} beside it, like {@code csi4j serve} would.
 */
final class DemoPlugin implements AutoCloseable {
    static final String NODE = "demo-node";

    private final Path dir;
    private final DriverConfig config;
    private final Driver driver;
    private final PluginServer server;
    private final Endpoint csi;
    private final Endpoint addons;

    private DemoPlugin(Path dir, DriverConfig config, Driver driver, PluginServer server, Endpoint csi, Endpoint addons) {
        this.dir = dir;
        this.config = config;
        this.driver = driver;
        this.server = server;
        this.csi = csi;
        this.addons = addons;
    }

    static DemoPlugin start(Path parent, long poolBytes) throws IOException {
        Files.createDirectories(parent);
        Path dir = Files.createTempDirectory(parent.toAbsolutePath(), "csi4j-demo-");
        var config = new DriverConfig(dir.resolve("data"), NODE, EngineKind.IMAGE, OptionalLong.of(poolBytes),
                DriverConfig.Mode.ALL, 0, 64L << 20, 1.0, DriverConfig.GroupDeletePolicy.DELETE_VOLUMES, true, 64);
        Driver driver = null;
        try {
            driver = Driver.open(config);
            Endpoint csi = Endpoint.parse(config.layout().csiEndpoint());
            var builder = PluginServer.builder().listen(csi, driver.csiServices().toArray(BindableService[]::new));
            // the CSI-Addons services (volume groups) on their own socket, as csi4j serve does
            Endpoint addons = Endpoint.parse(config.layout().addonsEndpoint());
            builder.listen(addons, driver.addonsServices().toArray(BindableService[]::new));
            return new DemoPlugin(dir, config, driver, builder.build().start(), csi, addons);
        } catch (IOException | RuntimeException e) {
            if (driver != null) driver.close();
            release(config);
            removeTree(dir);
            throw e;
        }
    }

    Path dir() { return dir; }
    Endpoint endpoint() { return csi; }
    Endpoint addonsEndpoint() { return addons; }
    Driver driver() { return driver; }

    /** Where node paths go: {@code <dir>/node}, outside the data directory, as kubelet's would be. */
    Path nodeDir() {
        return dir.resolve("node");
    }

    /** Mounts left under the demo directory (other than the pool itself); must be none after clean-up. */
    List<Path> mountsLeft() {
        Path pool;
        try {
            pool = new DataDir(config.dataDir().toRealPath()).pool();
        } catch (IOException e) {
            pool = new DataDir(config.dataDir()).pool();
        }
        Path poolDir = pool;
        return MountTable.read().under(dir).stream().map(MountInfo::mountPoint).filter(p -> !p.equals(poolDir)).toList();
    }

    /** Stops serving, closes the driver, unmounts the pool, removes the directory. */
    @Override
    public void close() {
        try {
            server.close();
        } finally {
            try {
                driver.close();
            } finally {
                release(config);
                removeTree(dir);
            }
        }
    }

    private static void release(DriverConfig config) {
        // the pool mount outlives a driver by design; the demo is the one that uninstalls it
        Pool.uninstall(config.layout());
    }

    /** Removes the tree unless something is still mounted under it (then removing would reach into a volume). */
    static void removeTree(Path dir) {
        if (!Files.exists(dir)) return;
        if (!MountTable.read().under(dir).isEmpty()) {
            throw new IllegalStateException("not removing " + dir + ": still mounted under it: " + MountTable.read().under(dir));
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) Files.delete(p);
        } catch (IOException e) {
            throw new IllegalStateException("cannot remove " + dir + ": " + e, e);
        }
    }
}
