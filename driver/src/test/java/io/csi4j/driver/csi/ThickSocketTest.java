package io.csi4j.driver.csi;

import static io.csi4j.driver.csi.Wire.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.csi4j.driver.os.ZeroFill;
import io.csi4j.driver.testing.LeakCheck;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Thick CreateVolume over the real socket: a create longer than the CO's deadline completes; no overcommit. */
@ExtendWith(LeakCheck.class)
class ThickSocketTest {
    private static final long GIB = 1L << 30;
    @RegisterExtension
    static final ServedImagePool POOL = ServedImagePool.ofBytes(2 * GIB);

    private static ServedDriver served() { return POOL.served(); }

    private static Path nodeDir() { return POOL.nodeDir(); }

    private static CreateVolumeRequest thick(String name, long bytes) {
        return Wire.create(name, bytes, Wire.block()).putParameters("csi4j.io/provisioning", "thick").build();
    }

    /**
     * The CO gives up on the first call (its deadline passes while the image is filled); the fill goes on, and the
     * CO's retries get ABORTED (operation pending) or join the running call, until the volume is there, thick.
     */
    @Test
    void aCreateLongerThanTheDeadlineCompletes() throws Exception {
        CreateVolumeRequest request = thick("thick-slow", 768 * MIB);
        StatusRuntimeException late = assertThrows(StatusRuntimeException.class, () ->
                ControllerGrpc.newBlockingStub(served().channel()).withDeadlineAfter(1, TimeUnit.MILLISECONDS).createVolume(request));
        assertEquals(Status.Code.DEADLINE_EXCEEDED, late.getStatus().getCode());
        CreateVolumeResponse made = null;
        long giveUp = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
        while (made == null) {
            try {
                made = served().controller.createVolume(request);
            } catch (StatusRuntimeException e) {
                if (e.getStatus().getCode() != Status.Code.ABORTED) throw e;   // "operation pending": retry
                if (System.nanoTime() > giveUp) fail("still being created after 3 minutes: " + e.getStatus());
                Thread.sleep(200);
            }
        }
        assertEquals(768 * MIB, made.getVolume().getCapacityBytes());
        String id = made.getVolume().getVolumeId();
        ZeroFill.Layout layout = ZeroFill.layout(served().image(id));
        assertTrue(layout.thick(), layout.toString());
        assertEquals(id, served().controller.createVolume(request).getVolume().getVolumeId(), "one volume, however often asked");
        assertEquals(1, served().controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount());
    }

    @Test
    void aThickVolumeBeyondTheRealFreeSpaceIsRefusedBeforeAnythingIsWritten() {
        Status refused = Wire.fails(Status.Code.RESOURCE_EXHAUSTED, () -> served().controller.createVolume(thick("thick-big", 3 * GIB)));
        assertTrue(refused.getDescription().contains("space"), refused.getDescription());
        assertEquals(0, served().controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount());
        assertEquals(List.of(), List.of(served().volumesDir().toFile().list()), "no image, no sidecar");
    }

    @Test
    void provisioningIsCheckedBeforeAnythingIsWritten() {
        Wire.fails(Status.Code.INVALID_ARGUMENT, () -> served().controller.createVolume(
                Wire.create("lazy", 64 * MIB, Wire.block()).putParameters("csi4j.io/provisioning", "lazy").build()));
        assertEquals(0, served().controller.listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount());
    }
}
