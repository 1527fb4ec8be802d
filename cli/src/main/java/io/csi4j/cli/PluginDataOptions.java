package io.csi4j.cli;

import io.csi4j.driver.engine.EngineKind;
import java.net.InetAddress;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * What names a node's plugin data, shared by the commands that open it ({@code serve}, {@code fsck}): its data
 * directory, the engine its pool is kept with, and the node it belongs to.
 */
public final class PluginDataOptions {

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "./csi4j-data",
            description = "The plugin's data directory: its catalog, pool and sockets. Default: ${DEFAULT-VALUE}")
    Path dataDir;

    @Option(names = "--node-id", paramLabel = "ID",
            description = "This node's id (fsck: the node that owns the rebuilt rows). Default: the host name")
    String nodeId;

    @Option(names = "--engine", paramLabel = "image|dir", defaultValue = "image",
            description = "Storage engine: image (sparse image files on loop devices) or dir (directories); "
                    + "fsck: the one the plugin runs with. Default: ${DEFAULT-VALUE}")
    EngineKind engine;

    /** --node-id, else the host name. */
    String nodeIdOrHostName() {
        if (nodeId != null) return nodeId;
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return System.getenv().getOrDefault("HOSTNAME", "localhost");
        }
    }
}
