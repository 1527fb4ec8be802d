package io.csi4j.driver.os;

import static io.csi4j.driver.os.ReflinkTest.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FallocateTest {

    @Test
    void punchHoleFreesSpaceKeepsSizeAndReadsZeros() throws Exception {
        ScratchFilesystem.require("ext4");
        try (ScratchFilesystem fs = ScratchFilesystem.create("ext4")) {
            Path file = fs.mountPoint().resolve("data");
            byte[] data = randomBytes(4 << 20, 20);
            Files.write(file, data);
            Durable.fsync(file);
            long before = Fallocate.allocatedBytes(file);
            assertTrue(before >= 4 << 20);

            Fallocate.punchHole(file, 1 << 20, 2 << 20);

            assertEquals(4 << 20, Files.size(file));
            assertEquals(before - (2 << 20), Fallocate.allocatedBytes(file));
            byte[] expected = data.clone();
            Arrays.fill(expected, 1 << 20, 3 << 20, (byte) 0);
            assertArrayEquals(expected, Files.readAllBytes(file));
        }
    }

    @Test
    void sparseFileAllocatesNothing(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("sparse");
        try (var raf = new java.io.RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(1L << 30);
        }
        assertEquals(0, Fallocate.allocatedBytes(file));
        OsException e = assertThrows(OsException.class, () -> Fallocate.punchHole(dir.resolve("none"), 0, 1));
        assertEquals(Errno.ENOENT, e.errno());
    }
}
