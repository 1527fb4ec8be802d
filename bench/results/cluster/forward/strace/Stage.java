import io.csi4j.proto.csi.*;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import java.util.*;
public class Stage {
    public static void main(String[] a) throws Exception {
        var c = ControllerGrpc.newBlockingStub(Channels.builder(Endpoint.parse(a[0])).build());
        var cap = VolumeCapability.newBuilder().setMount(VolumeCapability.MountVolume.getDefaultInstance())
            .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(VolumeCapability.AccessMode.Mode.SINGLE_NODE_WRITER)).build();
        var t = Topology.newBuilder().putSegments("topology.csi4j.io/node", "node-1").build();
        int n = Integer.parseInt(a[2]);
        String tag = a[3];
        String id = c.createVolume(CreateVolumeRequest.newBuilder().setName("get-" + tag).addVolumeCapabilities(cap)
            .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1 << 20))
            .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(t).addPreferred(t)).build()).getVolume().getVolumeId();
        long[] d = new long[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            switch (a[1]) {
                case "get" -> c.controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build());
                case "create" -> { var v = c.createVolume(CreateVolumeRequest.newBuilder().setName(tag + i).addVolumeCapabilities(cap)
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(1 << 20))
                    .setAccessibilityRequirements(TopologyRequirement.newBuilder().addRequisite(t).addPreferred(t)).build()).getVolume();
                    c.deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build()); }
                case "validate" -> c.validateVolumeCapabilities(ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(id).addVolumeCapabilities(cap).build());
            }
            d[i] = System.nanoTime() - t0;
        }
        Arrays.sort(d);
        System.out.printf("%s x%d p50 %.3f ms%n", a[1], n, d[n / 2] / 1e6);
    }
}
