package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DurableTest {

    @Test
    void atomicRenameReplacesTheTarget(@TempDir Path dir) throws Exception {
        Path target = Files.writeString(dir.resolve("state.json"), "old");
        Path tmp = Files.writeString(dir.resolve(".state.json.tmp"), "new");
        Durable.fsync(tmp);

        Durable.atomicRename(tmp, target);

        assertEquals("new", Files.readString(target));
        assertFalse(Files.exists(tmp));
    }

    @Test
    void atomicRenameAcrossDirectoriesOfOneFilesystem(@TempDir Path dir) throws Exception {
        Path staging = Files.createDirectory(dir.resolve("staging"));
        Path tmp = Files.writeString(staging.resolve("v1"), "volume");
        Path target = Files.createDirectory(dir.resolve("pool")).resolve("v1");
        Durable.atomicRename(tmp, target);
        assertEquals("volume", Files.readString(target));
    }

    @Test
    void failuresCarryErrno(@TempDir Path dir) throws Exception {
        Path missing = dir.resolve("missing");
        OsException rename = assertThrows(OsException.class, () -> Durable.atomicRename(missing, dir.resolve("t")));
        assertEquals(Errno.ENOENT, rename.errno());
        assertEquals("rename(" + missing + " -> " + dir.resolve("t") + "): ENOENT (No such file or directory)",
                rename.getMessage());
        Path file = Files.writeString(dir.resolve("f"), "x");
        OsException notDir = assertThrows(OsException.class, () -> Durable.atomicRename(file, file.resolve("t")));
        assertEquals(Errno.ENOTDIR, notDir.errno());
        Durable.fsyncDirectory(dir);
        assertThrows(OsException.class, () -> Durable.fsync(missing));
    }

    @Test
    void createDirectoriesMakesTheMissingOnesAndLeavesTheRest(@TempDir Path dir) throws Exception {
        Path kept = Files.writeString(Files.createDirectory(dir.resolve("data")).resolve("kept"), "x");
        Path deep = dir.resolve("data").resolve("replication").resolve("rounds");
        Durable.createDirectories(deep);
        assertTrue(Files.isDirectory(deep));
        assertEquals("x", Files.readString(kept));
        Durable.createDirectories(deep);                     // again: nothing to do
        Path file = Files.writeString(dir.resolve("f"), "x");
        assertThrows(java.io.UncheckedIOException.class, () -> Durable.createDirectories(file.resolve("t")));
    }
}
