package io.csi4j.cli;

import io.csi4j.driver.storage.DataDir;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Whether a plugin is using a data directory now: the commands that must not run beside one ask here. */
final class DataDirUse {
    private DataDirUse() {}

    /** The reason the data directory is in use ("a plugin is serving on ..."), or empty when nothing uses it. */
    static Optional<String> inUse(DataDir dir) {
        for (Path socket : new Path[] {dir.csiSocket(), dir.addonsSocket()}) {
            if (serving(socket)) return Optional.of("a plugin is serving on " + socket);
        }
        // a plugin serving elsewhere (--endpoint) still holds its catalog open
        return holderOf(dir.catalog()).map(pid -> "process " + pid + " (" + command(pid) + ") has " + dir.catalog() + " open");
    }

    /** True when something accepts connections on the socket (a file a killed plugin left behind does not). */
    static boolean serving(Path socket) {
        if (!Files.exists(socket)) return false;
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            return channel.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            return false;
        }
    }

    /** A process (not this one) with the file open, from /proc/PID/fd. */
    private static Optional<Long> holderOf(Path file) {
        Path wanted;
        try {
            if (!Files.exists(file)) return Optional.empty();
            wanted = file.toRealPath();
        } catch (IOException e) {
            return Optional.empty();
        }
        long self = ProcessHandle.current().pid();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path proc : procs) {
                long pid = Long.parseLong(proc.getFileName().toString());
                if (pid == self) continue;
                try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
                    for (Path fd : fds) {
                        try {
                            if (Files.readSymbolicLink(fd).equals(wanted)) return Optional.of(pid);
                        } catch (IOException e) {
                            // closed meanwhile
                        }
                    }
                } catch (IOException e) {
                    // gone, or not ours to read
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    private static String command(long pid) {
        return ProcessHandle.of(pid).flatMap(h -> h.info().command()).orElse("?");
    }
}
