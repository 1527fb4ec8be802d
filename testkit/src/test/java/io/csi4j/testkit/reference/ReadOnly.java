package io.csi4j.testkit.reference;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Makes a published copy read-only the way the process can: as root (which file modes do not stop)
 * by a read-only bind mount of the directory onto itself, otherwise by dropping write permission.
 */
final class ReadOnly {
    private ReadOnly() {}

    static boolean root() {
        try {
            return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
        } catch (IOException | UnsupportedOperationException e) {
            return false;
        }
    }

    /** Returns true when a mount was made (and must be undone with {@link #release}). */
    static boolean apply(Path target) {
        if (root()) {
            run(List.of("mount", "--bind", target.toString(), target.toString()));
            try {
                run(List.of("mount", "-o", "remount,bind,ro", target.toString()));
            } catch (RuntimeException e) {
                run(List.of("umount", target.toString()));
                throw e;
            }
            return true;
        }
        try (Stream<Path> walk = Files.walk(target)) {
            walk.forEach(p -> p.toFile().setWritable(false, false));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return false;
    }

    static void release(Path target, boolean mounted) {
        if (mounted) run(List.of("umount", target.toString()));
        try (Stream<Path> walk = Files.walk(target)) {
            walk.forEach(p -> p.toFile().setWritable(true, true));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed: " + output.strip());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + command, e);
        }
    }
}
