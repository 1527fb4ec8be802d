// Not a test: the data-mobility benchmark of issue 18, run by scripts/bench-mobility against processes it started.
//   run CONTROLLER_SOCKET WORK_DIR ROUNDS PKI_DIR
//       loopback: plain TCP over 127.0.0.1, 4 GiB in 1 MiB writes (what the link can do), and the same over mutual TLS
//             between two Netty event loops with gRPC's TLS settings and engine, the second of two runs (what the link
//             can carry encrypted, shown beside, not part of the verdict)
//       disk: 1 GiB written into node-2's pool with fdatasync (plainly, and streamed with a flush every 64 MiB as the
//             copy writes; the better counts), then read back after dropping the page cache; three
//             times before the copies and once more right before each copy
//       copy: a 10 GiB block volume on node-1 with 1 GiB of random data, snapshotted, restored onto node-2 ROUNDS
//             times through the controller (caches dropped before each; node-2's replica removed, so each is full)
//       verdict: each copy against the slower of the link and the disk reading taken just before it (the host caches
//             this VM's disk, so a reading can move 5x within a minute and one baseline per run decides the result
//             more than the copy does); also the median copy against the medians of all disk readings
//   floor WORK_DIR PKI_DIR
//       the copy floor alone (no cluster): the CPU a copy cannot avoid here, read + TLS + streamed write, in CPU-s per
//       GiB of this JVM's own time (not machine-wide as in run: on a shared machine that counts the others' work too) (medians of three disk readings in WORK_DIR, the second of two TLS runs); scripts/bench-replication
//       judges replication's CPU per GiB against it
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
        if (args[0].equals("floor")) {
            ownCpu = true;
            floor(Path.of(args[1]), Path.of(args[2]));
            System.exit(0);
        }
        String socket = args[1];
        Path work = Path.of(args[2]);
        int rounds = Integer.parseInt(args[3]);
        double b0 = busy();
        double link = loopback(4 * GIB);
        double b1 = busy();
        System.out.printf("loopback TCP: %.0f MB/s (%.2f CPU-s per GiB, machine-wide)%n", link, (b1 - b0) / 4);
        tlsLoopback(4 * GIB, Path.of(args[4]));   // once to warm the JIT up: the floor below must not count compiling
        double b2 = busy();
        double tls = tlsLoopback(4 * GIB, Path.of(args[4]));
        double tlsCpu = (busy() - b2) / 4;
        System.out.printf("loopback mutual TLS (%s, two event loops): %.0f MB/s (%.2f CPU-s per GiB)%n", io.csi4j.sdk.server.MutualTls.engine(), tls, tlsCpu);
        // three times, the median of each: one reading of this VM's disk moved from 320 to 1,900 MB/s between runs
        Path diskFile = work.resolve("node-2/pool/bench-disk.tmp");
        List<Disk> readings = new ArrayList<>();
        for (int i = 0; i < 3; i++) readings.add(disk(diskFile, GIB));
        System.out.printf("disk before the copies: write+fdatasync %.0f MB/s (the better of plain and streamed), read (cold) %.0f MB/s (medians of %s, each plain/streamed/read)%n",
                median(readings, Disk::write), median(readings, Disk::read), readings);
        double slowerBefore = slower(link, readings);
        System.out.printf("the slower of disk and link: %.0f MB/s (70%%: %.0f MB/s)%n", slowerBefore, 0.7 * slowerBefore);

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
        List<Double> copyCpu = new ArrayList<>();   // machine-wide CPU-s per GiB of each copy
        List<Double> ofRound = new ArrayList<>();   // each copy's rate over the slower of link and its own disk reading
        for (int r = 0; r < rounds; r++) {
            Path replicas = work.resolve("node-2/pool/replicas");
            if (Files.isDirectory(replicas)) try (var s = Files.list(replicas)) { for (Path p : s.toList()) Files.delete(p); }
            Disk now = disk(diskFile, GIB);
            readings.add(now);
            double slower = slower(link, List.of(now));
            dropCaches();
            double[] cpu0 = agentsCpu();
            double busy0 = busy();
            long t0 = System.nanoTime();
            var v = csi.createVolume(request("bench-copy-" + r, "node-2", 10 * GIB, snap)).getVolume();
            double seconds = (System.nanoTime() - t0) / 1e9;
            double rate = allocated / 1e6 / seconds;
            double[] cpu1 = agentsCpu();
            copyCpu.add((busy() - busy0) / (allocated / (double) GIB));
            rates.add(rate);
            ofRound.add(100 * rate / slower);
            long copyAllocated = io.csi4j.driver.os.FileStat.of(work.resolve("node-2/pool/volumes/" + v.getVolumeId() + ".img")).allocatedBytes();
            System.out.printf("round %d: disk just before %s MB/s; restore onto node-2 in %.2f s: %.0f MB/s of allocated data (%.0f%% of the slower, %.0f MB/s); copy allocates %d bytes; CPU node-1 %.2f s, node-2 %.2f s, machine %.2f s per GiB; load %s%n",
                    r + 1, now, seconds, rate, 100 * rate / slower, slower, copyAllocated, cpu1[0] - cpu0[0], cpu1[1] - cpu0[1], copyCpu.getLast(),
                    Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
            csi.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build());
        }
        Collections.sort(rates);
        Collections.sort(ofRound);
        // what the machine spends per GiB on the parts no copy avoids: reading the source cold, carrying it over TLS,
        // writing it durably; its cores then bound any copy's rate whatever the disk and link could do alone
        double readCpu = median(readings, Disk::readCpu), writeCpu = median(readings, Disk::streamedCpu);
        double floor = readCpu + tlsCpu + writeCpu;
        int cores = Runtime.getRuntime().availableProcessors();
        System.out.printf("CPU a copy cannot avoid here: read %.2f + TLS %.2f + streamed write %.2f = %.2f CPU-s per GiB (medians);"
                        + " on %d cores at most %.0f MB/s. The copies: median %.2f CPU-s per GiB%n",
                readCpu, tlsCpu, writeCpu, floor, cores, cores / floor * GIB / 1e6,
                copyCpu.stream().sorted().toList().get(copyCpu.size() / 2));
        double slowerAll = slower(link, readings);
        System.out.printf("median copy against the TLS link alone (%.0f MB/s): %.0f%%%n", tls, 100 * rates.get(rates.size() / 2) / tls);
        System.out.printf("median of the rounds against their own disk reading: %.0f%% of the slower of disk and link%n",
                ofRound.get(ofRound.size() / 2));
        System.out.printf("median copy against the medians of all %d disk readings (%.0f MB/s): %.0f MB/s = %.0f%%%n",
                readings.size(), slowerAll, rates.get(rates.size() / 2), 100 * rates.get(rates.size() / 2) / slowerAll);
        csi.deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(snap).build());
        csi.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(source).build());
        System.exit(0);
    }

    /** The floor of run's verdict, measured alone: what one GiB copied costs the machine at the least. */
    static void floor(Path work, Path pki) throws Exception {
        tlsLoopback(2 * GIB, pki);   // warms the JIT up, as in run
        double b = busy();
        double tls = tlsLoopback(2 * GIB, pki);
        double tlsCpu = (busy() - b) / 2;
        List<Disk> readings = new ArrayList<>();
        for (int i = 0; i < 3; i++) readings.add(disk(work.resolve("bench-disk.tmp"), GIB));
        double readCpu = median(readings, Disk::readCpu), writeCpu = median(readings, Disk::streamedCpu);
        System.out.printf("loopback mutual TLS: %.0f MB/s; disk (plain/streamed/read MB/s): %s%n", tls, readings);
        System.out.printf("copy floor: read %.2f + TLS %.2f + streamed write %.2f = %.2f CPU-s per GiB (this process, medians)%n",
                readCpu, tlsCpu, writeCpu, readCpu + tlsCpu + writeCpu);
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

    /** 1 MiB writes of random data from one Netty event loop to another over mutual TLS; MB/s at the receiver. */
    static double tlsLoopback(long bytes, Path pki) throws Exception {
        File cert = pki.resolve("agent.pem").toFile(), key = pki.resolve("agent-key.pem").toFile(), ca = pki.resolve("ca.pem").toFile();
        var provider = io.netty.handler.ssl.OpenSsl.isAvailable() ? io.netty.handler.ssl.SslProvider.OPENSSL : io.netty.handler.ssl.SslProvider.JDK;
        var serverTls = io.grpc.netty.GrpcSslContexts.configure(io.netty.handler.ssl.SslContextBuilder.forServer(cert, key)
                .trustManager(ca).clientAuth(io.netty.handler.ssl.ClientAuth.REQUIRE), provider).build();
        var clientTls = io.grpc.netty.GrpcSslContexts.configure(io.netty.handler.ssl.SslContextBuilder.forClient()
                .keyManager(cert, key).trustManager(ca), provider).build();
        var loops = new io.netty.channel.MultiThreadIoEventLoopGroup(2, io.netty.channel.nio.NioIoHandler.newFactory());
        var done = new java.util.concurrent.CompletableFuture<Long>();
        try {
            var server = new io.netty.bootstrap.ServerBootstrap().group(loops).channel(io.netty.channel.socket.nio.NioServerSocketChannel.class)
                    .childHandler(new io.netty.channel.ChannelInitializer<io.netty.channel.socket.SocketChannel>() {
                        @Override protected void initChannel(io.netty.channel.socket.SocketChannel ch) {
                            ch.pipeline().addLast(serverTls.newHandler(ch.alloc()), new io.netty.channel.ChannelInboundHandlerAdapter() {
                                long received;
                                @Override public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
                                    var buf = (io.netty.buffer.ByteBuf) msg;
                                    received += buf.readableBytes();
                                    buf.release();
                                    if (received >= bytes) done.complete(System.nanoTime());
                                }
                            });
                        }
                    }).bind(InetAddress.getByName("127.0.0.1"), 0).sync().channel();
            int port = ((InetSocketAddress) server.localAddress()).getPort();
            byte[] random = new byte[(int) MIB];
            new Random(1).nextBytes(random);
            var block = io.netty.buffer.Unpooled.directBuffer((int) MIB).writeBytes(random);
            long[] start = new long[1];
            var client = new io.netty.bootstrap.Bootstrap().group(loops).channel(io.netty.channel.socket.nio.NioSocketChannel.class)
                    .handler(new io.netty.channel.ChannelInitializer<io.netty.channel.socket.SocketChannel>() {
                        @Override protected void initChannel(io.netty.channel.socket.SocketChannel ch) {
                            var tlsHandler = clientTls.newHandler(ch.alloc(), "127.0.0.1", port);  // the agent certificate names 127.0.0.1
                            ch.pipeline().addLast(tlsHandler, new io.netty.channel.ChannelInboundHandlerAdapter() {
                                long sent;
                                void pump(io.netty.channel.ChannelHandlerContext ctx) {
                                    while (sent < bytes && ctx.channel().isWritable()) {
                                        ctx.write(block.retainedDuplicate());
                                        sent += MIB;
                                    }
                                    ctx.flush();
                                }
                                @Override public void userEventTriggered(io.netty.channel.ChannelHandlerContext ctx, Object event) {
                                    if (event instanceof io.netty.handler.ssl.SslHandshakeCompletionEvent e) {
                                        if (!e.isSuccess()) { done.completeExceptionally(e.cause()); return; }
                                        start[0] = System.nanoTime();
                                        pump(ctx);
                                    }
                                }
                                @Override public void channelWritabilityChanged(io.netty.channel.ChannelHandlerContext ctx) {
                                    if (start[0] != 0) pump(ctx);
                                }
                            });
                        }
                    }).connect("127.0.0.1", port).sync().channel();
            long end = done.get(120, java.util.concurrent.TimeUnit.SECONDS);
            client.close().sync();
            server.close().sync();
            block.release();
            return bytes / 1e6 / ((end - start[0]) / 1e9);
        } finally {
            loops.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS).sync();
        }
    }

    /** floor mode: busy() counts this JVM's own CPU (both TLS ends, the disk's syscalls), not a shared machine's. */
    static boolean ownCpu;

    /** CPU-seconds the whole machine has been busy (all but idle, iowait and steal), from /proc/stat; or this JVM's. */
    static double busy() throws IOException {
        if (ownCpu) {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;   // utime, stime (USER_HZ)
        }
        String[] f = Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split(" +");
        long ticks = 0;
        for (int i : new int[] {1, 2, 3, 6, 7}) ticks += Long.parseLong(f[i]);   // user nice system irq softirq
        return ticks / 100.0;   // USER_HZ
    }

    /**
     * One reading of the disk, MB/s: the plain write (1 GiB, then fdatasync), the streamed write (the same with a flush
     * started every 64 MiB as the copy's receiver does, so the disk writes while more arrives) and the cold read; and
     * the machine's CPU-s per GiB of the streamed write and of the read. The better write is what the disk can do: a
     * copy that beat the plain reading showed it understated the disk.
     */
    record Disk(double plain, double streamed, double read, double streamedCpu, double readCpu) {
        double write() { return Math.max(plain, streamed); }

        @Override public String toString() { return String.format("%.0f/%.0f/%.0f", plain, streamed, read); }
    }

    /** The slower of the link and the medians of the disk's readings. */
    static double slower(double link, List<Disk> readings) {
        return Math.min(link, Math.min(median(readings, Disk::write), median(readings, Disk::read)));
    }

    static double median(List<Disk> readings, java.util.function.ToDoubleFunction<Disk> of) {
        return readings.stream().mapToDouble(of).sorted().toArray()[readings.size() / 2];
    }

    static Disk disk(Path file, long bytes) throws Exception {
        byte[] data = new byte[(int) MIB];
        new Random(2).nextBytes(data);
        double plain = write(file, data, bytes, false);
        Files.delete(file);
        double b0 = busy();
        double streamed = write(file, data, bytes, true);
        double b1 = busy();
        dropCaches();
        double b2 = busy();
        long t0 = System.nanoTime();
        try (var ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocateDirect((int) MIB);
            while (ch.read(buffer) > 0) buffer.clear();
        }
        double read = bytes / 1e6 / ((System.nanoTime() - t0) / 1e9);
        double b3 = busy();
        Files.delete(file);
        double gib = bytes / (double) GIB;
        return new Disk(plain, streamed, read, (b1 - b0) / gib, (b3 - b2) / gib);
    }

    static double write(Path file, byte[] data, long bytes, boolean streamed) throws Exception {
        long t0 = System.nanoTime();
        try (var ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            Thread flusher = null;
            for (long at = 0; at < bytes; at += MIB) {
                ch.write(ByteBuffer.wrap(data), at);
                if (streamed && (at + MIB) % (64 * MIB) == 0 && (flusher == null || !flusher.isAlive())) {
                    flusher = Thread.ofPlatform().start(() -> {
                        try { ch.force(false); } catch (IOException e) { throw new UncheckedIOException(e); }
                    });
                }
            }
            if (flusher != null) flusher.join();
            ch.force(false);
        }
        return bytes / 1e6 / ((System.nanoTime() - t0) / 1e9);
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
