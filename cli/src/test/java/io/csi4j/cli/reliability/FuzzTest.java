package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.ProbeRequest;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8, hostile input: a seeded fuzzer mutates valid requests of every RPC at the protobuf level
 * (flipped and truncated bytes, wrong wire types, huge repeated fields and maps, 10 MB strings, deep
 * nesting, extreme numbers) and writes raw garbage on the socket. The plugin must answer every call with
 * a status, stay up, and hold no more descriptors, loop devices, mounts or memory afterwards.
 * {@code csi4j.fuzz.cases} sets the number of RPC cases (default 2000), {@code csi4j.fuzz.seed} replays one run.
 */
class FuzzTest {
    static final String[] FLAGS = {"--engine", "image", "--pool-size", "1Gi", "--overcommit-ratio", "50"};
    /** A heap the size a DaemonSet would give: memory must stay bounded within it. */
    static final List<String> JVM = List.of("-Xmx256m");
    static final long RSS_LIMIT_KIB = 640 * 1024;

    private Random random;

    @Test
    void mutatedRequestsAndGarbageGetErrorsNeverACrashOrALeak(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        long seed = Long.getLong("csi4j.fuzz.seed", System.nanoTime());
        int cases = Integer.getInteger("csi4j.fuzz.cases", 2000);
        System.out.println("fuzz: seed " + seed + " (-Dcsi4j.fuzz.seed=" + seed + " replays it)");
        random = new Random(seed);
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path paths = Files.createDirectories(tmp.resolve("co"));
        try (Plugin plugin = Plugin.start(data, JVM, FLAGS)) {
            List<String> mountsBefore = mountPoints();
            ManagedChannel channel = plugin.channel();
            var controller = ControllerGrpc.newBlockingStub(channel);
            String realVolume = controller.createVolume(CreateVolumeRequest.newBuilder().setName("fuzz-seed")
                    .setCapacityRange(Rpc.atLeast(World.VOLUME_BYTES)).addVolumeCapabilities(Rpc.mountXfs()).build())
                    .getVolume().getVolumeId();
            String realSnapshot = controller.createSnapshot(CreateSnapshotRequest.newBuilder().setName("fuzz-seed-snap")
                    .setSourceVolumeId(realVolume).build()).getSnapshot().getSnapshotId();
            // node calls name a volume that does not exist, so no fuzz case can mount anything
            var seeds = new Seeds(realVolume, realSnapshot, paths, random, Map.of("fuzz-key", "fuzz-secret-value"), false);
            ManagedChannel addons = plugin.addonsChannel();
            List<MethodDescriptor<?, ?>> methods = Seeds.methods(addons != null);
            // warm up every method once with its valid seed, then take the baseline
            for (var method : methods) Seeds.call(Seeds.isAddons(method) ? addons : channel, method, seeds.seedFor(method).toByteArray());
            Thread.sleep(500);
            int fdsBefore = Leaks.openFds(plugin.pid());
            long rssBefore = Leaks.rssKiB(plugin.pid());
            List<String> loopsBefore = Leaks.loopsUnder(data.resolve("pool"));

            Map<String, Integer> codes = new TreeMap<>();
            List<String> bad = new ArrayList<>();
            long maxRss = rssBefore;
            long t0 = System.nanoTime();
            for (int i = 0; i < cases; i++) {
                var method = methods.get(random.nextInt(methods.size()));
                Mutation mutation = Mutation.values()[random.nextInt(Mutation.values().length)];
                byte[] request = mutate(mutation, seeds.seedFor(method));
                Status status = Seeds.call(Seeds.isAddons(method) ? addons : channel, method, request);
                Status.Code code = status.getCode();
                codes.merge(code.name(), 1, Integer::sum);
                if (code == Status.Code.UNKNOWN || code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
                    bad.add(method.getFullMethodName() + " " + mutation + " -> " + code + ": " + status.getDescription());
                }
                if (!plugin.alive()) fail("the plugin died on case " + i + " (" + method.getFullMethodName() + " " + mutation + "): " + plugin.stderr());
                if (i % 250 == 0) maxRss = Math.max(maxRss, Leaks.rssKiB(plugin.pid()));
            }
            long rpcMillis = (System.nanoTime() - t0) / 1_000_000;
            int garbage = sendGarbage(data.resolve("csi.sock"), 300);
            assertTrue(plugin.alive(), "the plugin survives raw garbage: " + plugin.stderr());

            // still serving, and nothing held
            assertEquals(Status.Code.OK, Seeds.call(channel, IdentityGrpc.getProbeMethod(), ProbeRequest.getDefaultInstance().toByteArray()).getCode());
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            if (addons != null) addons.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            Thread.sleep(1500);
            System.gc();
            int fdsAfter = Leaks.openFds(plugin.pid());
            long rssAfter = Leaks.rssKiB(plugin.pid());
            maxRss = Math.max(maxRss, rssAfter);
            System.out.printf("fuzz: %d RPC cases over %d methods in %d ms, %d raw garbage connections; codes %s%n",
                    cases, methods.size(), rpcMillis, garbage, codes);
            System.out.printf("fuzz: fds %d -> %d, RSS %d -> %d KiB (max %d)%n", fdsBefore, fdsAfter, rssBefore, rssAfter, maxRss);
            assertEquals(List.of(), bad.stream().limit(20).toList(), bad.size() + " calls answered with a code that means the plugin broke");
            assertTrue(fdsAfter <= fdsBefore + 8, "file descriptors leak: " + fdsBefore + " -> " + fdsAfter);
            assertTrue(maxRss < RSS_LIMIT_KIB, "memory unbounded: RSS reached " + maxRss + " KiB");
            assertEquals(loopsBefore, Leaks.loopsUnder(data.resolve("pool")), "loop devices");
            var newMounts = new ArrayList<>(mountPoints());
            mountsBefore.forEach(newMounts::remove);   // other processes may unmount theirs meanwhile
            // other tests and benchmarks on this machine mount in their own scratch directories meanwhile
            newMounts.removeIf(m -> !m.startsWith(tmp.toString()) && (m.startsWith("/tmp/") || m.startsWith("/var/tmp/")));
            assertEquals(List.of(), newMounts, "mounts made during the fuzz");
            assertFalse(plugin.stderr().contains("OutOfMemoryError"), plugin.stderr());
            assertEquals(0, plugin.stop(30_000), "a clean stop after the fuzz");
        } finally {
            Leaks.cleanUp(tmp);
        }
    }

    // ---- the methods and their valid seeds ----

    // ---- mutations ----

    enum Mutation { NONE, FLIP, TRUNCATE, GARBAGE, WRONG_WIRE_TYPE, HUGE_REPEATED, HUGE_MAP, STRING_3MB, STRING_10MB,
        DEEP_NESTING, EXTREME_NUMBERS, UNKNOWN_FIELDS, NUL_AND_DOTS }

    private byte[] mutate(Mutation mutation, Message seed) throws IOException {
        byte[] bytes = seed.toByteArray();
        Descriptor type = seed.getDescriptorForType();
        return switch (mutation) {
            case NONE -> bytes;
            case FLIP -> {
                byte[] copy = bytes.clone();
                for (int i = 0, n = 1 + random.nextInt(8); i < n && copy.length > 0; i++) {
                    copy[random.nextInt(copy.length)] ^= (byte) (1 << random.nextInt(8));
                }
                yield copy;
            }
            case TRUNCATE -> java.util.Arrays.copyOf(bytes, bytes.length == 0 ? 0 : random.nextInt(bytes.length));
            case GARBAGE -> {
                byte[] junk = new byte[random.nextInt(1024)];
                random.nextBytes(junk);
                yield junk;
            }
            case WRONG_WIRE_TYPE -> {
                var out = new ByteArrayOutputStream();
                out.write(bytes);
                var coded = CodedOutputStream.newInstance(out);
                for (FieldDescriptor f : type.getFields()) {   // each field again, with a wire type it is not
                    switch (f.getJavaType()) {
                        case STRING, MESSAGE, BYTE_STRING -> coded.writeUInt64(f.getNumber(), random.nextLong());
                        default -> coded.writeString(f.getNumber(), "not-a-number");
                    }
                }
                coded.flush();
                yield out.toByteArray();
            }
            case HUGE_REPEATED -> {
                var b = seed.toBuilder();
                int n = 20_000 + random.nextInt(80_000);
                for (FieldDescriptor f : type.getFields()) {
                    if (!f.isRepeated() || f.isMapField()) continue;
                    Object one = seed.getRepeatedFieldCount(f) > 0 ? seed.getRepeatedField(f, 0) : null;
                    if (one == null && f.getJavaType() == FieldDescriptor.JavaType.STRING) one = "r";
                    if (one == null) continue;
                    for (int i = 0; i < n; i++) b.addRepeatedField(f, one instanceof String ? "id-" + i : one);
                }
                yield b.build().toByteArray();
            }
            case HUGE_MAP -> {
                var b = seed.toBuilder();
                int n = 10_000 + random.nextInt(40_000);
                for (FieldDescriptor f : type.getFields()) {
                    if (!f.isMapField()) continue;
                    for (int i = 0; i < n; i++) b.addRepeatedField(f, Seeds.mapEntry(f, "k" + i, "v" + i));
                }
                yield b.build().toByteArray();
            }
            case STRING_3MB, STRING_10MB -> {
                var b = seed.toBuilder();
                String big = "A".repeat(mutation == Mutation.STRING_3MB ? 3 << 20 : 10 << 20);
                List<FieldDescriptor> strings = type.getFields().stream()
                        .filter(f -> f.getJavaType() == FieldDescriptor.JavaType.STRING && !f.isRepeated()).toList();
                if (!strings.isEmpty()) b.setField(strings.get(random.nextInt(strings.size())), big);
                yield b.build().toByteArray();
            }
            case DEEP_NESTING -> {
                // a message field (or an unknown field number) nested thousands deep
                int number = type.getFields().stream().filter(f -> f.getJavaType() == FieldDescriptor.JavaType.MESSAGE)
                        .map(FieldDescriptor::getNumber).findFirst().orElse(999);
                byte[] inner = new byte[0];
                for (int i = 0, depth = 200 + random.nextInt(3000); i < depth; i++) {
                    var out = new ByteArrayOutputStream();
                    var coded = CodedOutputStream.newInstance(out);
                    coded.writeByteArray(number, inner);
                    coded.flush();
                    inner = out.toByteArray();
                }
                yield inner;
            }
            case EXTREME_NUMBERS -> {
                var b = seed.toBuilder();
                long[] extremes = {Long.MIN_VALUE, Long.MAX_VALUE, -1, 0, 1L << 62};
                setNumbers(b, type, extremes[random.nextInt(extremes.length)], 0);
                yield b.build().toByteArray();
            }
            case UNKNOWN_FIELDS -> {
                var out = new ByteArrayOutputStream();
                out.write(bytes);
                var coded = CodedOutputStream.newInstance(out);
                for (int i = 0; i < 50; i++) coded.writeString(1000 + random.nextInt(100_000), "unknown-" + i);
                coded.flush();
                yield out.toByteArray();
            }
            case NUL_AND_DOTS -> {
                var b = seed.toBuilder();
                String[] hostile = {"../../../../etc/passwd", "/etc", "a\0b", "..", "x/../../y", "%2e%2e/", "\u202e",
                        "a".repeat(5000), "/", ""};
                for (FieldDescriptor f : type.getFields()) {
                    if (f.getJavaType() == FieldDescriptor.JavaType.STRING && !f.isRepeated() && random.nextBoolean()) {
                        b.setField(f, hostile[random.nextInt(hostile.length)]);
                    }
                }
                yield b.build().toByteArray();
            }
        };
    }

    private static void setNumbers(Message.Builder b, Descriptor type, long value, int depth) {
        for (FieldDescriptor f : type.getFields()) {
            if (f.isRepeated()) continue;
            switch (f.getJavaType()) {
                case LONG -> b.setField(f, value);
                case INT -> b.setField(f, (int) value);
                case MESSAGE -> {
                    if (depth < 3 && b.hasField(f)) {
                        var inner = ((Message) b.getField(f)).toBuilder();
                        setNumbers(inner, f.getMessageType(), value, depth + 1);
                        b.setField(f, inner.build());
                    }
                }
                default -> { }
            }
        }
    }

    // ---- sending ----

    /** Raw bytes on fresh connections: noise, a preface then noise, an oversized frame header, a half preface. */
    private int sendGarbage(Path socket, int connections) throws IOException {
        byte[] preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < connections; i++) {
            try (SocketChannel s = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                s.connect(UnixDomainSocketAddress.of(socket));
                byte[] junk = new byte[random.nextInt(64 * 1024)];
                random.nextBytes(junk);
                ByteBuffer out = switch (i % 4) {
                    case 0 -> ByteBuffer.wrap(junk);
                    case 1 -> ByteBuffer.allocate(preface.length + junk.length).put(preface).put(junk).flip();
                    case 2 -> ByteBuffer.allocate(preface.length + 9).put(preface)
                            .put(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, 0, 0, 0, 0, 0, 1}).flip();
                    default -> ByteBuffer.wrap(preface, 0, random.nextInt(preface.length));
                };
                try {
                    while (out.hasRemaining()) s.write(out);
                } catch (IOException closedByPeer) {
                    // the plugin hung up on us: the right answer to garbage
                }
            }
        }
        return connections;
    }

    private static List<String> mountPoints() throws IOException {
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream().map(l -> l.split(" ")[4]).sorted().toList();
    }
}
