package io.csi4j.cli.reliability;

import io.csi4j.driver.testing.Privileged;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** What a plugin process holds, read from the kernel: mounts, loop devices, descriptors, memory. */
final class Leaks {
    private Leaks() {}

    /** Root is needed for loop devices and mounts: skip outside CI, fail in CI. */
    static void requireRoot() {
        Privileged.require(Privileged.isRoot(), "needs root (loop devices, mounts)");
    }

    /** Mount points at or under {@code dir}, except {@code except} (the private pool). */
    static List<Path> mountsUnder(Path dir, Path except) {
        List<Path> found = new ArrayList<>();
        for (String line : read(Path.of("/proc/self/mountinfo")).split("\n")) {
            String[] fields = line.split(" ");
            if (fields.length < 5) continue;
            Path point = Path.of(unescape(fields[4]));
            if (point.startsWith(dir) && !point.equals(except)) found.add(point);
        }
        return found;
    }

    /** Loop devices whose backing file lies under {@code dir}. */
    static List<String> loopsUnder(Path dir) {
        List<String> found = new ArrayList<>();
        try (Stream<Path> devices = Files.list(Path.of("/sys/block"))) {
            for (Path device : devices.filter(p -> p.getFileName().toString().startsWith("loop")).toList()) {
                Path backing = device.resolve("loop/backing_file");
                if (!Files.exists(backing)) continue;
                String file = read(backing).strip().replace(" (deleted)", "");
                if (Path.of(file).startsWith(dir)) found.add(device.getFileName() + "=" + file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return found;
    }

    static int openFds(long pid) {
        try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return (int) fds.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Resident set size in KiB. */
    static long rssKiB(long pid) {
        for (String line : read(Path.of("/proc/" + pid + "/status")).split("\n")) {
            if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }
        throw new IllegalStateException("no VmRSS for " + pid);
    }

    /**
     * Detaches what a failed run may have left under {@code dir} (test clean-up): mounts deepest first with
     * private pools last (a volume mounted elsewhere keeps its pool busy), then loop devices, then pools.
     */
    static void cleanUp(Path dir) {
        List<Path> mounts = new ArrayList<>(mountsUnder(dir, null));
        mounts.sort(java.util.Comparator.<Path, Boolean>comparing(p -> p.endsWith("pool"))
                .thenComparing(p -> -p.getNameCount()));
        for (Path m : mounts) {
            try {
                io.csi4j.driver.os.Mounts.unmount(m);
            } catch (RuntimeException e) {
                System.err.println("clean-up: cannot unmount " + m + ": " + e.getMessage());
            }
        }
        for (String loop : loopsUnder(dir)) {
            try {
                new ProcessBuilder("losetup", "-d", "/dev/" + loop.substring(0, loop.indexOf('='))).inheritIO().start().waitFor();
            } catch (IOException | InterruptedException e) {
                System.err.println("clean-up: cannot detach " + loop + ": " + e.getMessage());
            }
        }
        for (Path pool : mountsUnder(dir, null)) {   // pools that were busy above
            try {
                io.csi4j.driver.os.Mounts.unmount(pool);
            } catch (RuntimeException e) {
                System.err.println("clean-up: cannot unmount " + pool + ": " + e.getMessage());
            }
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String unescape(String field) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < field.length(); i++) {
            char c = field.charAt(i);
            if (c == '\\' && i + 3 < field.length()) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
