package io.csi4j.driver.node;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;

/**
 * Remembers ephemeral inline volumes whose NodeUnpublishVolume finished, so a retry of that call
 * answers OK while an unpublish of a volume that never existed answers NOT_FOUND (spec table).
 * One empty file per volume id (hashed: the CO chooses these ids), pruned after a day.
 */
final class EphemeralTombstones {
    private static final Duration KEEP = Duration.ofDays(1);
    private final Path dir;

    EphemeralTombstones(Path dir) {
        this.dir = dir;
    }

    boolean contains(String csiVolumeId) {
        return Files.exists(file(csiVolumeId));
    }

    void add(String csiVolumeId) {
        try {
            Files.createDirectories(dir);
            Path file = file(csiVolumeId);
            if (!Files.exists(file)) Files.createFile(file);
            prune();
        } catch (IOException e) {
            throw new UncheckedIOException("recording the unpublish of ephemeral volume in " + dir, e);
        }
    }

    void remove(String csiVolumeId) {
        try {
            Files.deleteIfExists(file(csiVolumeId));
        } catch (IOException e) {
            throw new UncheckedIOException("clearing ephemeral tombstone in " + dir, e);
        }
    }

    private void prune() throws IOException {
        Instant cutoff = Instant.now().minus(KEEP);
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                if (Files.getLastModifiedTime(f).toInstant().isBefore(cutoff)) Files.deleteIfExists(f);
            }
        }
    }

    private Path file(String csiVolumeId) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(csiVolumeId.getBytes(StandardCharsets.UTF_8));
            return dir.resolve(HexFormat.of().formatHex(digest, 0, 16));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
