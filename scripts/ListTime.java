// Not a test: ListVolumes of everything in one page and in pages of 500, p50 of 15 (creates volumes up to N first).
// Usage: java -cp "cli/target/csi4j.jar:cli/target/lib/*" scripts/ListTime.java unix:///path/csi.sock 10000
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import java.util.*;
import java.util.concurrent.*;

public class ListTime {
    public static void main(String[] a) throws Exception {
        var ch = Channels.builder(Endpoint.parse(a[0])).maxInboundMessageSize(64 << 20).build();
        var c = ControllerGrpc.newBlockingStub(ch);
        int want = Integer.parseInt(a[1]);
        int have = c.listVolumes(ListVolumesRequest.newBuilder().build()).getEntriesCount();
        var cap = VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.newBuilder().setFsType("ext4"))
            .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
        var pool = Executors.newFixedThreadPool(16);
        List<Future<?>> fs = new ArrayList<>();
        for (int i = have; i < want; i++) { int n = i; fs.add(pool.submit(() -> c.createVolume(CreateVolumeRequest.newBuilder().setName("lt-" + n).addVolumeCapabilities(cap).setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1 << 20)).build()))); }
        for (var f : fs) f.get();
        pool.shutdown();
        for (int round = 0; round < 3; round++) {
            double[] t = new double[15];
            int n = 0;
            for (int i = 0; i < t.length; i++) { long s = System.nanoTime(); n = c.listVolumes(ListVolumesRequest.newBuilder().build()).getEntriesCount(); t[i] = (System.nanoTime() - s) / 1e6; }
            Arrays.sort(t);
            double[] p = new double[15];
            for (int i = 0; i < p.length; i++) { long s = System.nanoTime(); String tok = ""; do { var r = c.listVolumes(ListVolumesRequest.newBuilder().setMaxEntries(500).setStartingToken(tok).build()); tok = r.getNextToken(); } while (!tok.isEmpty()); p[i] = (System.nanoTime() - s) / 1e6; }
            Arrays.sort(p);
            System.out.printf("%d entries: one page p50 %.1f ms min %.1f; paged by 500 p50 %.1f ms min %.1f%n", n, t[7], t[0], p[7], p[0]);
        }
        ch.shutdownNow();
    }
}
