package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.driver.engine.AccessType;
import io.csi4j.driver.engine.MountOptions;
import io.csi4j.driver.storage.StorageException;
import io.grpc.Status;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The image engine's plain values: image sizes, and the mount data its filesystems get. */
class ImageValuesTest {

    @Test
    void xfsVolumesAlwaysMountWithNouuid() {
        assertEquals("nouuid", LoopFilesystems.mountData("xfs", MountOptions.parse(List.of())));
        assertEquals("discard,nouuid", LoopFilesystems.mountData("xfs", MountOptions.parse(List.of("discard"))));
        assertNull(LoopFilesystems.mountData("ext4", MountOptions.parse(List.of("noatime"))));
    }

    @Test
    void sizesRoundUpToMebibytesAndFilesystemMinimums() {
        long mib = ImageFormat.MIB;
        assertEquals(mib, ImageFormat.roundUp(1, AccessType.BLOCK));
        assertEquals(3 * mib, ImageFormat.roundUp(2 * mib + 1, AccessType.BLOCK));
        assertEquals(ImageFormat.EXT4_MINIMUM, ImageFormat.roundUp(mib, AccessType.mount("")));
        assertEquals(ImageFormat.XFS_MINIMUM, ImageFormat.roundUp(mib, AccessType.mount("xfs")));
        assertEquals(Status.Code.INVALID_ARGUMENT,
                StorageStatus.code(assertThrows(StorageException.class, () -> ImageFormat.roundUp(mib, AccessType.mount("zfs"))).reason()));
    }
}
