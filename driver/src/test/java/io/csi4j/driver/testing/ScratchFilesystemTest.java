package io.csi4j.driver.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.os.BlockDevice;
import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import io.csi4j.driver.os.ToolException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The fixture itself, and online expansion: file, loop capacity, then the filesystem. */
class ScratchFilesystemTest {

    @ParameterizedTest
    @ValueSource(strings = {"ext4", "xfs", "btrfs"})
    void growsOnlineAndCleansUpCompletely(String fsType) throws Exception {
        ScratchFilesystem.require(fsType);
        ScratchFilesystem fs = ScratchFilesystem.create(fsType);
        Path dir = fs.dir();
        Path image = fs.image();
        try {
            Files.writeString(fs.mountPoint().resolve("kept"), "across the resize");
            long before = fs.stats().totalBytes();

            if (fsType.equals("ext4") && !ScratchFilesystem.hasCapability(ScratchFilesystem.CAP_SYS_RESOURCE)) {
                // containers without CAP_SYS_RESOURCE: the kernel refuses EXT4_IOC_RESIZE_FS with EPERM
                ToolException e = assertThrows(ToolException.class, () -> fs.grow(768L << 20));
                assertTrue(e.getMessage().contains("Permission denied to resize filesystem"), e.getMessage());
                assertEquals(768L << 20, BlockDevice.size(fs.device().node()), "the loop device grew all the same");
            } else {
                fs.grow(768L << 20);
                assertEquals(768L << 20, BlockDevice.size(fs.device().node()));
                long after = fs.stats().totalBytes();
                assertTrue(after - before > 200L << 20, fsType + " grew from " + before + " to " + after);
            }
            assertEquals("across the resize", Files.readString(fs.mountPoint().resolve("kept")));
        } finally {
            fs.close();
        }
        assertFalse(MountTable.read().isMountPoint(fs.mountPoint()));
        assertTrue(LoopDevice.list().stream().noneMatch(d -> d.backingFile().equals(image)));
        assertFalse(Files.exists(dir));
    }

    @Test
    void aFailedCreateLeavesNothingBehind() {
        Privileged.requireRoot();
        var before = LoopDevice.list();
        // ext4 cannot be made on 16 KiB: mkfs fails after the image exists and the loop device is attached
        assertThrows(ToolException.class, () -> ScratchFilesystem.create("ext4", 16 << 10));
        // other test runs share the kernel: a leak is a new device still bound to a scratch image that was deleted
        assertEquals(java.util.List.of(), LoopDevice.list().stream().filter(d -> !before.contains(d) && d.backingFileDeleted()
                && d.backingFile().toString().contains("csi4j-scratch-ext4-")).toList());
    }
}
