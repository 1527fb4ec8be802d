package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FreezeTest {

    /** Writes and fsyncs a file on a platform thread (it will sit in the kernel while frozen). */
    private static CompletableFuture<Void> writeInBackground(Path file) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("frozen-writer").start(() -> {
            try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.wrap(new byte[1 << 20]));
                ch.force(true);
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        return done;
    }

    @ParameterizedTest
    @ValueSource(strings = {"xfs", "ext4"})
    void writesWaitWhileFrozenAndFinishAfterThaw(String fsType) throws Exception {
        ScratchFilesystem.require(fsType);
        try (ScratchFilesystem fs = ScratchFilesystem.create(fsType)) {
            writeInBackground(fs.mountPoint().resolve("before")).get(10, TimeUnit.SECONDS);

            CompletableFuture<Void> write;
            try (Freeze.Frozen frozen = Freeze.freeze(fs.mountPoint())) {
                assertEquals(List.of(fs.mountPoint()), frozen.mountPoints());
                write = writeInBackground(fs.mountPoint().resolve("during"));
                assertThrows(TimeoutException.class, () -> write.get(700, TimeUnit.MILLISECONDS),
                        "a write to a frozen filesystem must wait");
                assertTrue(Files.exists(fs.mountPoint()), "reads still work");
            }
            write.get(10, TimeUnit.SECONDS);
            assertEquals(1 << 20, Files.size(fs.mountPoint().resolve("during")));
        }
    }

    @Test
    void freezeTwiceIsEbusyAndThawOfAThawedFilesystemIsFalse() {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem fs = ScratchFilesystem.create("xfs")) {
            assertFalse(Freeze.thaw(fs.mountPoint()), "not frozen: EINVAL is tolerated");
            try (Freeze.Frozen frozen = Freeze.freeze(fs.mountPoint())) {
                assertEquals(List.of(fs.mountPoint()), frozen.mountPoints());
                OsException again = assertThrows(OsException.class, () -> Freeze.freeze(fs.mountPoint()));
                assertEquals(Errno.EBUSY, again.errno());
                assertTrue(Freeze.thaw(fs.mountPoint()), "thaw by path");
            } // close() thaws a filesystem someone else thawed already without complaint
            assertFalse(Freeze.thaw(fs.mountPoint()));
        }
    }

    @Test
    void freezeAllThawsWhatItFrozeWhenOneFails(@TempDir Path dir) throws Exception {
        ScratchFilesystem.require("xfs");
        try (ScratchFilesystem a = ScratchFilesystem.create("xfs"); ScratchFilesystem b = ScratchFilesystem.create("xfs")) {
            Freeze.Frozen both = Freeze.freezeAll(List.of(a.mountPoint(), b.mountPoint()));
            CompletableFuture<Void> write;
            try {
                assertEquals(2, both.mountPoints().size());
                write = writeInBackground(b.mountPoint().resolve("x"));
                assertThrows(TimeoutException.class, () -> write.get(300, TimeUnit.MILLISECONDS));
            } finally {
                both.close();
            }
            write.get(10, TimeUnit.SECONDS);

            Path notMounted = Files.createDirectory(dir.resolve("not-mounted"));
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Freeze.freezeAll(List.of(a.mountPoint(), notMounted)));
            assertTrue(e.getMessage().contains("not a mount point"));
            assertFalse(Freeze.thaw(a.mountPoint()), "the first one was thawed again");
        }
    }

    @Test
    void refusesToFreezeAPathThatIsNotAMountPoint(@TempDir Path dir) {
        // would otherwise freeze the filesystem holding the temp dir, i.e. this machine's root
        assertThrows(IllegalArgumentException.class, () -> Freeze.freeze(dir));
    }

}
