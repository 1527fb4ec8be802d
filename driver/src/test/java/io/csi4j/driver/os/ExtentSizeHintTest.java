package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;

/** XFS extent size hints through FS_IOC_FSSETXATTR: set on an empty image, refused once it has extents. */
class ExtentSizeHintTest {
    private static final long MIB = 1 << 20;

    @Test
    void anEmptyXfsFileTakesTheHintAndAllocatesInChunksOfIt() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem fs = ScratchFilesystem.create("xfs")) {
            Path image = fs.mountPoint().resolve("volume.img");
            SparseFile.create(image, 64 * MIB);
            assertEquals(0, ExtentSizeHint.of(image));
            assertTrue(ExtentSizeHint.set(image, MIB));
            assertEquals(MIB, ExtentSizeHint.of(image));
            try (FileChannel out = FileChannel.open(image, StandardOpenOption.WRITE)) {
                out.write(ByteBuffer.wrap(new byte[4096]), 10 * MIB + 8192);
                out.force(true);
            }
            // one 4 KiB write allocated (at least) the whole aligned 1 MiB chunk around it
            assertTrue(FileStat.of(image).allocatedBytes() >= MIB, "allocated " + FileStat.of(image).allocatedBytes());

            Path written = fs.mountPoint().resolve("written.img");
            SparseFile.create(written, 64 * MIB);
            try (FileChannel out = FileChannel.open(written, StandardOpenOption.WRITE)) {
                out.write(ByteBuffer.wrap(new byte[4096]), 0);
                out.force(true);
            }
            OsException refused = assertThrows(OsException.class, () -> ExtentSizeHint.set(written, MIB));
            assertTrue(refused.is(Errno.EINVAL), refused.getMessage());
        }
    }

    @Test
    void ext4HasNoHints() {
        ScratchFilesystem.require("ext4");
        try (ScratchFilesystem fs = ScratchFilesystem.create("ext4")) {
            Path image = fs.mountPoint().resolve("volume.img");
            SparseFile.create(image, 64 * MIB);
            assertFalse(ExtentSizeHint.set(image, MIB));
            assertEquals(0, ExtentSizeHint.of(image));
        }
    }
}
