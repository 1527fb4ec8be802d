// Not a test: the data-mobility benchmark of issue 18, run by scripts/bench-mobility against processes it started.
//   run CONTROLLER_SOCKET WORK_DIR ROUNDS PKI_DIR
//       loopback: plain TCP over 127.0.0.1, 4 GiB in 1 MiB writes (what the link can do)
//       disk: 1 GiB written into node-2's pool with fdatasync, then read back after dropping the page cache; three
//             times, the median of each
//       copy: a 10 GiB block volume on node-1 with 1 GiB of random data, snapshotted, restored onto node-2 ROUNDS
//             times through the controller (caches dropped before each; node-2's replica removed, so each is full)
// Usage: java -cp "cli/target/csi4j.jar:cli/target/lib/*" scripts/MobilityBench.java run ...
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import java.io.*;
import java.net.*;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.*;
import java.util.*;

public class MobilityBench {
    static final long MIB = 1L << 20;
    static final long GIB = 1L << 30;

    public static void main(String[] args) throws Exception {
        String socket = args[1];
        Path work = Path.of(args[2]);
        int rounds = Integer.parseInt(args[3]);
        double link = loopback(4 * GIB);
        System.out.printf("loopback TCP: %.0f MB/s%n", link);
        // three times, the median of each: one reading of this VM's disk moved from 320 to 1,900 MB/s between runs
        double[][] tries = new double[3][];
        for (int i = 0; i < tries.length; i++) tries[i] = disk(work.resolve("node-2/pool/bench-disk.tmp"), GIB);
        double[] disk = {median(tries, 0), median(tries, 1)};
        System.out.printf("disk: write+fdatasync %.0f MB/s, read (cold) %.0f MB/s (medians of %s)%n", disk[0], disk[1],
                java.util.Arrays.stream(tries).map(t -> String.format("%.0f/%.0f", t[0], t[1])).toList());
        double slower = Math.min(link, Math.min(disk[0], disk[1]));
        System.out.printf("the slower of disk and link: %.0f MB/s (70%%: %.0f MB/s)%n", slower, 0.7 * slower);

        var csi = ControllerGrpc.newBlockingStub(Channels.connect(Endpoint.parse(socket)));
        String source = csi.createVolume(request("bench-src", "node-1", 10 * GIB, null)).getVolume().getVolumeId();
        Path image = work.resolve("node-1/pool/volumes/" + source + ".img");
        byte[] data = new byte[(int) MIB];
        var random = new Random(18);
        try (var ch = FileChannel.open(image, StandardOpenOption.WRITE)) {
            for (int i = 0; i < 1024; i++) {
                random.nextBytes(data);
                ch.write(ByteBuffer.wrap(data), i * 10 * MIB);
            }
            ch.force(true);
        }
        long allocated = io.csi4j.driver.os.FileStat.of(image).allocatedBytes();
        String snap = csi.createSnapshot(CreateSnapshotRequest.newBuilder().setName("bench-snap").setSourceVolumeId(source).build())
                .getSnapshot().getSnapshotId();
        System.out.printf("source: 10 GiB volume, %d bytes allocated (%.2f GiB)%n", allocated, allocated / (double) GIB);
        List<Double> rates = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            Path replicas = work.resolve("node-2/pool/replicas");
            if (Files.isDirectory(replicas)) try (var s = Files.list(replicas)) { for (Path p : s.toList()) Files.delete(p); }
            dropCaches();
            double[] cpu0 = agentsCpu();
            long t0 = System.nanoTime();
            var v = csi.createVolume(request("bench-copy-" + r, "node-2", 10 * GIB, snap)).getVolume();
            double seconds = (System.nanoTime() - t0) / 1e9;
            double rate = allocated / 1e6 / seconds;
            double[] cpu1 = agentsCpu();
            rates.add(rate);
            long copyAllocated = io.csi4j.driver.os.FileStat.of(work.resolve("node-2/pool/volumes/" + v.getVolumeId() + ".img")).allocatedBytes();
            System.out.printf("round %d: restore onto node-2 in %.2f s: %.0f MB/s of allocated data (%.0f%% of the slower); copy allocates %d bytes; CPU node-1 %.2f s, node-2 %.2f s; load %s%n",
                    r + 1, seconds, rate, 100 * rate / slower, copyAllocated, cpu1[0] - cpu0[0], cpu1[1] - cpu0[1],
                    Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
            csi.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
        }
        Collections.sort(rates);
        System.out.printf("median: %.0f MB/s = %.0f%% of the slower of disk and link%n", rates.get(rates.size() / 2),
                100 * rates.get(rates.size() / 2) / slower);
        csi.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snap).build());
        csi.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(source).build());
        System.exit(0);
    }

    static CreateVolumeRequest request(String name, String node, long bytes, String snapshot) {
        var t = Topology.newBuilder().putSegments("topology.csi4j.io/node", node).build();
        var b = CreateVolumeRequest.newBuilder().setName(name).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(bytes))
                .addVolumeCapabilities(VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance())
                        .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)))
                .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(t));
        if (snapshot != null) b.setVolumeContentSource(VolumeContentSource.newBuilder().setSnapshot(
                VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(snapshot)));
        return b.build();
    }

    static double loopback(long bytes) throws Exception {
        try (var server = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            var reader = new Thread(() -> {
                try (Socket s = server.accept(); InputStream in = s.getInputStream()) {
                    byte[] buffer = new byte[(int) MIB];
                    while (in.read(buffer) >= 0) { }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            reader.start();
            long t0 = System.nanoTime();
            try (Socket s = new Socket("127.0.0.1", server.getLocalPort()); OutputStream out = s.getOutputStream()) {
                byte[] buffer = new byte[(int) MIB];
                new Random(1).nextBytes(buffer);
                for (long sent = 0; sent < bytes; sent += buffer.length) out.write(buffer);
            }
            reader.join();
            return bytes / 1e6 / ((System.nanoTime() - t0) / 1e9);
        }
    }

    static double median(double[][] tries, int column) {
        return java.util.Arrays.stream(tries).mapToDouble(t -> t[column]).sorted().toArray()[tries.length / 2];
    }

    static double[] disk(Path file, long bytes) throws Exception {
        byte[] data = new byte[(int) MIB];
        new Random(2).nextBytes(data);
        long t0 = System.nanoTime();
        try (var ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long at = 0; at < bytes; at += MIB) ch.write(ByteBuffer.wrap(data), at);
            ch.force(false);
        }
        double write = bytes / 1e6 / ((System.nanoTime() - t0) / 1e9);
        dropCaches();
        t0 = System.nanoTime();
        try (var ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect((int) MIB);
            while (ch.read(buffer) > 0) buffer.clear();
        }
        double read = bytes / 1e6 / ((System.nanoTime() - t0) / 1e9);
        Files.delete(file);
        return new double[] {write, read};
    }

    /** CPU seconds (user + system) the two agents used so far, from CSI4J_BENCH_AGENT_PIDS; zeros without it. */
    static double[] agentsCpu() throws IOException {
        String pids = System.getenv().getOrDefault("CSI4J_BENCH_AGENT_PIDS", "").trim();
        double[] cpu = new double[2];
        if (pids.isEmpty()) return cpu;
        String[] each = pids.split(" +");
        for (int i = 0; i < 2; i++) {
            String stat = Files.readString(Path.of("/proc/" + each[i] + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            cpu[i] = (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;   // utime, stime in clock ticks (USER_HZ 100)
        }
        return cpu;
    }

    static void dropCaches() throws Exception {
        new ProcessBuilder("sync").inheritIO().start().waitFor();
        Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
    }
}
