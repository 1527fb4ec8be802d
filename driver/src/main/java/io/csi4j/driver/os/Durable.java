package io.csi4j.driver.os;

import java.nio.file.Path;

/**
 * The durability steps behind "intent, effect, commit": data reaches the disk before the name that
 * makes it visible does, and the name change itself is on disk before we report success.
 */
public final class Durable {
    private Durable() {}

    public static void fsync(Path file) {
        try (Fd fd = Fd.open(file, Libc.O_RDONLY)) {
            Libc.fsync(fd.fd(), file);
        }
    }

    /** Persists the directory entries (creates, renames, deletes) inside {@code dir}. */
    public static void fsyncDirectory(Path dir) {
        fsync(dir);
    }

    /**
     * rename(2) over {@code target}, nothing synced: for callers that sync the directories that matter
     * themselves, once for several renames.
     */
    public static void rename(Path from, Path to) {
        Libc.rename(from.toAbsolutePath(), to.toAbsolutePath());
    }

    /**
     * rename(2) over {@code target} (atomic: readers see the old or the new file, never a mix), then
     * fsync of the directories involved so the rename survives a crash. {@code tmp} should already be
     * fsync'ed by the caller.
     */
    public static void atomicRename(Path tmp, Path target) {
        Path from = tmp.toAbsolutePath();
        Path to = target.toAbsolutePath();
        Libc.rename(from, to);
        fsyncDirectory(to.getParent());
        if (!from.getParent().equals(to.getParent())) fsyncDirectory(from.getParent());
    }
}
