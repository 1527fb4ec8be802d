package io.csi4j.driver.os;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;

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
     * mkdir -p whose new entries survive a power cut: each directory it creates has its parent fsynced after it,
     * top down, so a state file fsynced into the deepest one later is never left in a directory that was lost
     * (review 2026-11-27 s10, F5). Directories that exist already are left alone.
     */
    public static void createDirectories(Path dir) {
        var missing = new ArrayDeque<Path>();
        for (Path p = dir.toAbsolutePath(); p != null && !Files.isDirectory(p); p = p.getParent()) missing.push(p);
        try {
            for (Path p : missing) {
                Files.createDirectories(p);           // tolerates a racing creator, unlike createDirectory
                fsyncDirectory(p.getParent());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
