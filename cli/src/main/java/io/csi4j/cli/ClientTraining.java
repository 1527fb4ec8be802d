package io.csi4j.cli;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.List;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.regex.Pattern;

/**
 * The workload the launcher records the client commands' start-up cache from ({@code -XX:AOTCacheOutput}, once per
 * build): the command lines a user or a script runs most, against a plugin the launcher serves for it
 * ({@code ClientTraining CSI_ENDPOINT}). Kept apart from the serving cache ({@link AotTraining}), so that a plugin does
 * not map client classes at every start, nor a client the plugin's.
 */
public final class ClientTraining {
    private ClientTraining() {}

    public static void main(String[] args) {
        String endpoint = args[0];
        var quiet = new PrintStream(OutputStream.nullOutputStream());
        List<List<String>> lines = List.of(
                List.of("identity", "info"), List.of("identity", "caps"), List.of("identity", "probe"),
                List.of("identity", "info", "-o", "json"), List.of("identity", "info", "-o", "yaml"),
                List.of("controller", "caps"), List.of("controller", "capacity"),
                List.of("controller", "create-volume", "client-training", "--required-bytes", "1Mi"),
                List.of("controller", "list-volumes", "--paging"), List.of("controller", "list-snapshots"),
                List.of("node", "info"), List.of("node", "caps"),
                List.of("call", "csi.v1.Controller/ListVolumes", "{\"maxEntries\":2}"),
                List.of("--version"), List.of("--help"));
        for (int round = 0; round < 3; round++) {
            for (List<String> line : lines) {
                var withEndpoint = new ArrayList<>(line);
                if (!line.getFirst().startsWith("-")) withEndpoint.addAll(List.of("--endpoint", endpoint));
                // a line that fails (a plugin without node service, say) still trains what it loaded: noted, not fatal
                if (Main.run(quiet, quiet, withEndpoint.toArray(String[]::new)) != 0) System.err.println("training line failed: " + line);
            }
        }
        // the volume goes again: found by name (create-volume is idempotent), then deleted
        var id = new ByteArrayOutputStream();
        Main.run(new PrintStream(id), quiet, "controller", "create-volume", "client-training", "--required-bytes", "1Mi",
                "-o", "json", "--endpoint", endpoint);
        var m = Pattern.compile("\"volume_id\": \"([^\"]+)\"").matcher(id.toString());
        if (m.find()) Main.run(quiet, quiet, "controller", "delete-volume", m.group(1), "--endpoint", endpoint);
        System.exit(0);   // gRPC's threads would keep the JVM alive a while
    }
}
