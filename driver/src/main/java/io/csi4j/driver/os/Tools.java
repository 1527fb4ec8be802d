package io.csi4j.driver.os;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * External programs the kernel offers no syscall for (mkfs, online resize, blkid). Each runs with
 * a timeout, stdin from /dev/null and LC_ALL=C; a failure's message carries the program's stderr.
 */
public final class Tools {
    private Tools() {}

    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);

    /** What a program printed and how it exited. */
    public record Result(List<String> command, int exitCode, String stdout, String stderr) {}

    private static final Map<String, String> DEBIAN_PACKAGES = Map.ofEntries(
            Map.entry("mkfs.ext4", "e2fsprogs"), Map.entry("resize2fs", "e2fsprogs"),
            Map.entry("e2fsck", "e2fsprogs"), Map.entry("tune2fs", "e2fsprogs"),
            Map.entry("mkfs.xfs", "xfsprogs"), Map.entry("xfs_growfs", "xfsprogs"), Map.entry("xfs_admin", "xfsprogs"),
            Map.entry("mkfs.btrfs", "btrfs-progs"), Map.entry("btrfs", "btrfs-progs"),
            Map.entry("blkid", "util-linux"), Map.entry("losetup", "util-linux"), Map.entry("mount", "util-linux"));
    private static final int KEEP_BYTES = 64 * 1024;
    private static final int MESSAGE_CHARS = 2000;
    private static final long PIPE_GRACE_NANOS = 2_000_000_000L;

    /** Runs {@code program args...}; throws {@link ToolException} unless it exits 0. */
    public static Result run(Duration timeout, String program, List<String> args) {
        Result result = exec(timeout, program, args);
        if (result.exitCode() != 0) throw failed(result);
        return result;
    }

    /** Runs {@code program args...} and returns whatever it exited with. */
    public static Result exec(Duration timeout, String program, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(locate(program).toString());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectInput(new File("/dev/null"));
        builder.environment().put("LC_ALL", "C");
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("starting " + String.join(" ", command), e);
        }
        Drain stdout = new Drain(process.getInputStream());
        Drain stderr = new Drain(process.getErrorStream());
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly); // what it forked, too
                process.destroyForcibly().waitFor();
                String err = stderr.awaitText(System.nanoTime() + PIPE_GRACE_NANOS);
                throw new ToolException(ToolException.Reason.TIMED_OUT, command, -1, err,
                        "`" + String.join(" ", command) + "` did not finish within " + timeout + tail(": ", err));
            }
            // a grandchild left running can hold the pipes open long after the program exited
            long deadline = System.nanoTime() + PIPE_GRACE_NANOS;
            return new Result(command, process.exitValue(), stdout.awaitText(deadline), stderr.awaitText(deadline));
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", command), e);
        }
    }

    /** The executable for {@code program}, from PATH plus the sbin directories root's PATH has. */
    public static Path locate(String program) {
        Set<Path> searchPath = new LinkedHashSet<>();
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!dir.isEmpty()) searchPath.add(Path.of(dir));
        }
        for (String dir : List.of("/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin")) searchPath.add(Path.of(dir));
        return locate(program, List.copyOf(searchPath));
    }

    static Path locate(String program, List<Path> searchPath) {
        for (Path dir : searchPath) {
            Path candidate = dir.resolve(program);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) return candidate;
        }
        String pkg = DEBIAN_PACKAGES.get(program);
        throw new ToolException(ToolException.Reason.NOT_FOUND, List.of(program), -1, "",
                program + " not found in " + searchPath
                        + (pkg == null ? "" : "; install the package " + pkg + " (Debian/Ubuntu: apt-get install " + pkg + ")"));
    }

    /** Makes a filesystem: ext4, xfs or btrfs, forced (the device may hold an old signature). */
    public static void mkfs(String fsType, Path device, List<String> extraArgs) {
        List<String> args = new ArrayList<>(switch (fsType) {
            // nodiscard: a fresh sparse image has nothing to discard; lazy inode tables format in ms
            case "ext4" -> List.of("-F", "-q", "-E", "nodiscard,lazy_itable_init=1");
            case "xfs" -> List.of("-f", "-q", "-K"); // xfsprogs >= 5.1 enables reflink by default
            case "btrfs" -> List.of("-f", "-q", "-K");
            default -> throw new IllegalArgumentException("unsupported filesystem type: " + fsType);
        });
        args.addAll(extraArgs);
        args.add(device.toString());
        run(DEFAULT_TIMEOUT, "mkfs." + fsType, args);
    }

    /** Grows an ext4 filesystem to its device's size (online when mounted). */
    public static void resize2fs(Path device) {
        run(DEFAULT_TIMEOUT, "resize2fs", List.of(device.toString()));
    }

    /** Grows a mounted xfs filesystem to its device's size. */
    public static void xfsGrowfs(Path mountPoint) {
        run(DEFAULT_TIMEOUT, "xfs_growfs", List.of("-d", mountPoint.toString()));
    }

    /** Grows a mounted btrfs filesystem to its device's size. */
    public static void btrfsResize(Path mountPoint) {
        run(DEFAULT_TIMEOUT, "btrfs", List.of("filesystem", "resize", "max", mountPoint.toString()));
    }

    /** The filesystem signature on a device ("ext4", "xfs" ...), probed directly, bypassing blkid's cache. */
    public static Optional<String> blkidType(Path device) {
        Result result = exec(DEFAULT_TIMEOUT, "blkid", List.of("-p", "-o", "value", "-s", "TYPE", device.toString()));
        return switch (result.exitCode()) {
            case 0 -> Optional.of(result.stdout().strip()).filter(type -> !type.isEmpty());
            case 2 -> Optional.empty(); // nothing recognised
            default -> throw failed(result);
        };
    }

    private static ToolException failed(Result result) {
        String message = "`" + String.join(" ", result.command()) + "` exited with " + result.exitCode()
                + tail(": ", result.stderr()) + tail(" (stdout: ", result.stdout()) + (result.stdout().isBlank() ? "" : ")");
        return new ToolException(ToolException.Reason.FAILED, result.command(), result.exitCode(), result.stderr(), message);
    }

    private static String tail(String prefix, String text) {
        String t = text.strip();
        if (t.isEmpty()) return "";
        return prefix + (t.length() <= MESSAGE_CHARS ? t : "..." + t.substring(t.length() - MESSAGE_CHARS));
    }

    /** Reads a program's output on a virtual thread, keeping the last KEEP_BYTES. */
    private static final class Drain {
        private final ByteArrayOutputStream kept = new ByteArrayOutputStream();
        private final Thread reader;

        Drain(InputStream in) {
            reader = Thread.ofVirtual().name("tool-output").start(() -> pump(in));
        }

        private void pump(InputStream in) {
            try (in) {
                byte[] buffer = new byte[8192];
                for (int n; (n = in.read(buffer)) > 0; ) {
                    synchronized (this) {
                        kept.write(buffer, 0, n);
                        if (kept.size() > 4 * KEEP_BYTES) {
                            byte[] all = kept.toByteArray();
                            kept.reset();
                            kept.write(all, all.length - KEEP_BYTES, KEEP_BYTES);
                        }
                    }
                }
            } catch (IOException e) {
                // the process is gone; what was read so far is all there is
            }
        }

        /** Everything read once the pipe closes, or what was read by the deadline. */
        String awaitText(long deadlineNanos) throws InterruptedException {
            reader.join(Duration.ofNanos(Math.max(1, deadlineNanos - System.nanoTime())));
            synchronized (this) {
                return kept.toString(StandardCharsets.UTF_8);
            }
        }
    }
}
