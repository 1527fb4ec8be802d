package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;

/** ExtentFile.count: every extent of a file, also past the first page FIEMAP is asked for. */
class ExtentFileTest {
    private static final long KIB = 1024;

    @Test
    void countsEveryExtentAcrossPages() throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem fs = ScratchFilesystem.create("xfs")) {
            Path empty = fs.mountPoint().resolve("empty.img");
            SparseFile.create(empty, 64 * KIB * KIB);
            try (ExtentFile f = ExtentFile.open(empty)) {
                assertEquals(0, f.count());
            }

            // 600 blocks apart from each other (more than one page of 512), written inside the file's size: no
            // speculative preallocation joins them
            int blocks = 600;
            Path holes = fs.mountPoint().resolve("holes.img");
            SparseFile.create(holes, blocks * 64 * KIB);
            try (FileChannel out = FileChannel.open(holes, StandardOpenOption.WRITE)) {
                for (int i = 0; i < blocks; i++) out.write(ByteBuffer.wrap(new byte[4096]).put(0, (byte) 1), i * 64 * KIB);
                out.force(true);
            }
            try (ExtentFile f = ExtentFile.open(holes)) {
                int ranges = 0;
                for (var r = f.nextData(0); r != null; r = f.nextData(r.end())) ranges++;
                assertEquals(blocks, ranges, "data ranges");
                assertEquals(blocks, f.count());
            }
        }
    }
}
