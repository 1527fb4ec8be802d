package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** What a fenced replica's mount goes through (docs/design.md, "Replicated volumes"), on real ext4 and xfs. */
class WriteStopTest {

    private static boolean readOnly(FileSystemException e) {
        return e.getReason() != null && e.getReason().contains("Read-only file system");
    }

    @ParameterizedTest
    @ValueSource(strings = {"ext4", "xfs"})
    void anIdleFilesystemIsRemountedReadOnlyWhatWasWrittenStaysAndARepeatIsANoOp(String fsType) throws Exception {
        ScratchFilesystem.require(fsType);
        try (ScratchFilesystem fs = ScratchFilesystem.create(fsType)) {
            Path kept = fs.mountPoint().resolve("kept");
            Files.writeString(kept, "written before the fence");
            assertEquals(WriteStop.Outcome.REMOUNTED_READ_ONLY, WriteStop.stop(fs.mountPoint()));
            var e = assertThrows(FileSystemException.class, () -> Files.writeString(fs.mountPoint().resolve("after"), "x"));
            assertTrue(readOnly(e), e.toString());
            assertEquals("written before the fence", Files.readString(kept));
            assertEquals(WriteStop.Outcome.ALREADY_READ_ONLY, WriteStop.stop(fs.mountPoint()));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"ext4", "xfs"})
    void aFileHeldOpenForWritingMakesItAShutdownAndItsNextWriteFails(String fsType) throws Exception {
        ScratchFilesystem.require(fsType);
        try (ScratchFilesystem fs = ScratchFilesystem.create(fsType)) {
            try (var ch = FileChannel.open(fs.mountPoint().resolve("log"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[4096]));
                ch.force(true);
                // the kernel refuses a read-only remount while a file is open for writing (EBUSY)
                assertEquals(WriteStop.Outcome.SHUT_DOWN, WriteStop.stop(fs.mountPoint()));
                assertThrows(IOException.class, () -> {
                    ch.write(ByteBuffer.wrap(new byte[4096]), 4096);
                    ch.force(true);
                });
                assertEquals(WriteStop.Outcome.SHUT_DOWN, WriteStop.stop(fs.mountPoint()), "a repeat shuts it down again, quietly");
            }
            assertThrows(IOException.class, () -> Files.writeString(fs.mountPoint().resolve("after"), "x"));
        }
    }

    @Test
    void refusesAPathThatIsNotAMountPoint(@TempDir Path dir) {
        // would otherwise remount the filesystem holding the temp dir read-only
        assertThrows(IllegalArgumentException.class, () -> WriteStop.stop(dir));
    }
}
