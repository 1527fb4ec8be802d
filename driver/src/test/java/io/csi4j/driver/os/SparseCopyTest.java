package io.csi4j.driver.os;

import static io.csi4j.driver.os.ReflinkTest.hasSharedExtents;
import static io.csi4j.driver.os.ReflinkTest.randomBytes;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SparseCopyTest {
    private static final long SIZE = 64L << 20;

    /** A 64 MiB file with three data islands (one of them at the very end) and holes between. */
    static Path sparseFile(Path dir) throws IOException {
        Path file = dir.resolve("sparse.img");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(randomBytes(1 << 20, 10)), 0);
            ch.write(ByteBuffer.wrap(randomBytes(3 << 20, 11)), 20L << 20);
            ch.write(ByteBuffer.wrap(randomBytes(12345, 12)), SIZE - 12345);
        }
        Durable.fsync(file); // allocate now, so SEEK_DATA sees extents rather than delalloc
        return file;
    }

    static String sha256(Path file) throws Exception {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        try (var in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 20];
            for (int n; (n = in.read(buf)) > 0; ) digest.update(buf, 0, n);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ext4", "xfs"})
    void copiesContentAndKeepsHoles(String fsType) throws Exception {
        ScratchFilesystem.require(fsType);
        try (ScratchFilesystem fs = ScratchFilesystem.create(fsType)) {
            Path src = sparseFile(fs.mountPoint());
            Path dst = fs.mountPoint().resolve("copy.img");

            long written = SparseCopy.copy(src, dst);
            Durable.fsync(dst);

            assertEquals(SIZE, Files.size(dst));
            assertEquals(sha256(src), sha256(dst));
            long data = (1 << 20) + (3 << 20) + 12345;
            // extents are whole blocks: the unaligned tail island brings the rest of its first block
            assertTrue(written >= data && written <= data + 4096, "only data extents are copied: " + written);
            long allocated = Fallocate.allocatedBytes(dst);
            assertTrue(allocated >= written && allocated < 8L << 20,
                    "copy stays sparse: " + allocated + " bytes allocated for " + SIZE);
            assertFalse(hasSharedExtents(dst), "a real copy, not a reflink");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"ext4"})
    void zeroBlocksInsideDataBecomeHoles(String fsType) throws Exception {
        ScratchFilesystem.require(fsType);
        try (ScratchFilesystem fs = ScratchFilesystem.create(fsType)) {
            Path src = fs.mountPoint().resolve("zeros.img");
            byte[] data = new byte[8 << 20];
            System.arraycopy(randomBytes(4096, 13), 0, data, 5 << 20, 4096);
            Files.write(src, data);
            Durable.fsync(src);
            assertTrue(Fallocate.allocatedBytes(src) >= 8 << 20, "written zeros are allocated");

            Path dst = fs.mountPoint().resolve("copy.img");
            SparseCopy.copy(src, dst);
            Durable.fsync(dst);

            assertArrayEquals(data, Files.readAllBytes(dst));
            assertTrue(Fallocate.allocatedBytes(dst) <= 2 << 20, "zero MiBs were not written");
        }
    }
}
