package io.csi4j.driver.replication;

import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.json.Json;
import io.csi4j.driver.os.Durable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * This node's durable memory of the nodes an operator declared permanently lost ({@code csi4j cluster forget-node};
 * docs/replication.md, "A node lost for good"): {@code <data-dir>/replication/forgotten.nodes}, a JSON map of node id to
 * the second it was forgotten, fsynced and renamed into place (the directory fsynced) before {@link #forget} returns.
 * The controller keeps no state: it reads the union of every answering agent's marks each tick (NodeAgent.ListReplicas)
 * and tells an agent lacking one. A mark is never dropped: a forgotten node stays gone (its agent is refused if it
 * answers again). The file is written whole only, so a damaged one means the disk: reading it fails loudly rather than
 * forgetting the marks.
 */
public final class ForgottenNodes {
    static final String FILE = "forgotten.nodes";
    /** A node id is at most this long (CSI's limit for a node id). */
    static final int MAX_NODE_ID = 256;

    private final Path file;

    /** {@code dir}: the replication directory, {@link ReplicaStates#DIRECTORY} under the data directory. */
    public ForgottenNodes(Path dir) {
        this.file = dir.resolve(FILE);
    }

    /** Every node forgotten here, with when; empty when none. */
    public synchronized Map<String, Instant> all() {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException none) {
            return Map.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        try {
            var out = new TreeMap<String, Instant>();
            Json.parseStringMap(text).forEach((node, at) -> out.put(node, Instant.ofEpochSecond(Long.parseLong(at))));
            return out;
        } catch (RuntimeException damaged) {
            throw DomainException.failed("forgotten nodes " + file + " is damaged: " + damaged.getMessage());
        }
    }

    /**
     * Records {@code nodeId} as forgotten at {@code at}, durably before it returns; a node already recorded keeps its
     * first time. {@code self}: this node's own id, which it never records (a live node cannot be forgotten).
     */
    public synchronized void forget(String nodeId, Instant at, String self) {
        if (nodeId == null || nodeId.isBlank() || nodeId.length() > MAX_NODE_ID || nodeId.chars().anyMatch(Character::isISOControl)) {
            throw DomainException.invalid("node_id must be 1 to " + MAX_NODE_ID + " characters without control characters");
        }
        if (nodeId.equals(self)) {
            throw DomainException.precondition("node '" + nodeId + "' is this node, which answers: a live node cannot be forgotten");
        }
        var marks = new TreeMap<>(all());
        if (marks.containsKey(nodeId)) return;
        marks.put(nodeId, at);
        var text = new TreeMap<String, Object>();
        marks.forEach((node, when) -> text.put(node, String.valueOf(when.getEpochSecond())));
        Path tmp = file.resolveSibling(FILE + ".tmp");
        try {
            Durable.createDirectories(file.getParent());
            Files.writeString(tmp, Json.write(text) + "\n", StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE);
            Durable.fsync(tmp);
            Durable.atomicRename(tmp, file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
