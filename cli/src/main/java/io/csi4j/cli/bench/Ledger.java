package io.csi4j.cli.bench;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.List;

/** Everything a bench run created and has not removed yet, so it can clean up even after failures. */
final class Ledger {
    final Set<String> volumes = ConcurrentHashMap.newKeySet();
    final Set<String> snapshots = ConcurrentHashMap.newKeySet();
    /** group snapshot id -> its snapshots' ids. */
    final Map<String, List<String>> groupSnapshots = new ConcurrentHashMap<>();
    /** volume id -> node id, for ControllerUnpublishVolume. */
    final Map<String, String> controllerPublished = new ConcurrentHashMap<>();
    /** volume id -> where the node may have staged and published it. */
    final Map<String, NodePaths> nodePaths = new ConcurrentHashMap<>();

    /** Names whose Create call ended without an answer (deadline, lost connection): they may exist. name -> source volume or "". */
    final Map<String, String> uncertainVolumes = new ConcurrentHashMap<>();
    final Map<String, String> uncertainSnapshots = new ConcurrentHashMap<>();
    final Map<String, List<String>> uncertainGroupSnapshots = new ConcurrentHashMap<>();

    record NodePaths(Path staging, Path target) {}

    int size() {
        return volumes.size() + snapshots.size() + groupSnapshots.size();
    }
}
