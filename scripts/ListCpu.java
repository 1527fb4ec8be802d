// Not a test: ListVolumes of everything in one page, N times, timed by the client, with the server's CPU time per
// call (utime+stime of SERVER_PID from /proc, so the load of other processes on the machine does not count).
// Usage: java -cp "cli/target/csi4j.jar:cli/target/lib/*" scripts/ListCpu.java unix:///path/csi.sock SERVER_PID 40
import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import java.nio.file.*;
import java.util.*;

public class ListCpu {
    static long cpuTicks(String pid) throws Exception {
        String[] f = Files.readString(Path.of("/proc/" + pid + "/stat")).replaceAll("^.*\\) ", "").split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);   // utime, stime (fields 14, 15)
    }

    public static void main(String[] a) throws Exception {
        var ch = Channels.builder(Endpoint.parse(a[0])).maxInboundMessageSize(64 << 20).build();
        var c = ControllerGrpc.newBlockingStub(ch);
        int n = Integer.parseInt(a[2]);
        for (int i = 0; i < 10; i++) c.listVolumes(ListVolumesRequest.newBuilder().build());   // warm-up
        double[] t = new double[n];
        int entries = 0;
        long cpu0 = cpuTicks(a[1]);
        for (int i = 0; i < n; i++) {
            long s = System.nanoTime();
            entries = c.listVolumes(ListVolumesRequest.newBuilder().build()).getEntriesCount();
            t[i] = (System.nanoTime() - s) / 1e6;
        }
        double cpuMs = (cpuTicks(a[1]) - cpu0) * 10.0 / n;   // USER_HZ = 100
        Arrays.sort(t);
        System.out.printf("%d entries, %d calls: p50 %.1f ms, min %.1f ms, max %.1f ms; server CPU %.1f ms per call; load %s%n",
                entries, n, t[n / 2], t[0], t[n - 1], cpuMs, Files.readString(Path.of("/proc/loadavg")).trim());
        ch.shutdownNow();
    }
}
