package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8: the UNIX sockets have their mode (0600, or --socket-mode) from the first moment they are
 * visible, watched by a thread that polls for them while the plugin starts; a TCP endpoint or metrics
 * address without a host listens on loopback only, as /proc/net/tcp shows.
 */
class SocketExposureTest {

    @Test
    void unixSocketsAre0600FromTheFirstMomentTheyExist(@TempDir Path tmp) throws Exception {
        assertEquals(Set.of("rw-------"), modesSeenWhileStarting(Files.createDirectories(tmp.resolve("a"))));
        assertEquals(Set.of("rw-rw----"), modesSeenWhileStarting(Files.createDirectories(tmp.resolve("b")), "--socket-mode", "0660"));
    }

    private static Set<String> modesSeenWhileStarting(Path data, String... flags) throws Exception {
        Set<String> seen = new ConcurrentSkipListSet<>();
        AtomicBoolean done = new AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger looks = new java.util.concurrent.atomic.AtomicInteger();
        Thread watcher = Thread.ofPlatform().start(() -> {
            while (!done.get()) {
                for (String name : List.of("csi.sock", "csi-addons.sock")) {
                    try {
                        seen.add(PosixFilePermissions.toString(Files.getPosixFilePermissions(data.resolve(name), LinkOption.NOFOLLOW_LINKS)));
                    } catch (IOException notYet) {
                        // not there yet
                    }
                }
                looks.incrementAndGet();
                Thread.onSpinWait();
            }
        });
        List<String> args = new ArrayList<>(List.of("--engine", "dir"));
        args.addAll(List.of(flags));
        try (Plugin plugin = Plugin.start(data, args.toArray(String[]::new))) {
            // on a loaded machine the watcher may not have run yet: let it look twice more at the served sockets
            int looked = looks.get();
            while (looks.get() < looked + 2) Thread.sleep(1);
            done.set(true);
            watcher.join();
            assertTrue(Files.exists(data.resolve("csi-addons.sock")), "the CSI-Addons socket is served too");
            try (Stream<Path> files = Files.list(data)) {
                assertEquals(List.of(), files.filter(p -> p.getFileName().toString().startsWith(".csi4j-")).toList(),
                        "no staging directory left");
            }
            assertEquals(0, plugin.stop(30_000));
        }
        System.out.printf("sockets: modes seen %s in %d looks while starting%n", seen, looks.get());
        return seen;
    }

    @Test
    void tcpEndpointAndMetricsWithoutHostListenOnLoopbackOnly(@TempDir Path tmp) throws Exception {
        int csi = freePort(), metrics = freePort();
        Path data = Files.createDirectories(tmp.resolve("data"));
        try (Plugin plugin = Plugin.startTcp(data, "tcp://:" + csi, "--engine", "dir", "--csi-addons-endpoint", "none",
                "--metrics-address", ":" + metrics)) {
            assertTrue(plugin.startupLine.contains("tcp://127.0.0.1:" + csi) || plugin.startupLine.contains("tcp://localhost:" + csi),
                    plugin.startupLine);
            for (int port : List.of(csi, metrics)) {
                List<String> listening = listeners(port);
                System.out.println("sockets: port " + port + " listens on " + listening);
                assertFalse(listening.isEmpty(), "nothing listens on " + port);
                assertTrue(listening.stream().allMatch(a -> a.equals("0100007F") || a.equals("0000000000000000FFFF00000100007F") || a.equals("00000000000000000000000001000000")),
                        "port " + port + " listens beyond loopback: " + listening);
            }
            assertEquals(0, plugin.stop(30_000));
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Local addresses (hex, as the kernel writes them) of the sockets listening on {@code port}. */
    private static List<String> listeners(int port) throws IOException {
        List<String> found = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            if (!Files.exists(Path.of(table))) continue;
            for (String line : Files.readAllLines(Path.of(table)).subList(1, Files.readAllLines(Path.of(table)).size())) {
                String[] f = line.trim().split("\\s+");
                String[] local = f[1].split(":");
                if (Integer.parseInt(local[1], 16) == port && f[3].equals("0A")) found.add(local[0]);
            }
        }
        return found;
    }
}
