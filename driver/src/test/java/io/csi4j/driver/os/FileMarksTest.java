package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The marks on a file in a temp dir (ext4 or tmpfs: both hold user extended attributes); no root needed. */
class FileMarksTest {
    @TempDir Path dir;

    @Test
    void aMarkIsSetReadAndClearedAndEachMarkIsItsOwn() throws Exception {
        Path file = Files.writeString(dir.resolve("image"), "data");
        assertFalse(FileMarks.has(file, "user.csi4j.a"));
        FileMarks.set(file, "user.csi4j.a");
        assertTrue(FileMarks.has(file, "user.csi4j.a"));
        assertFalse(FileMarks.has(file, "user.csi4j.b"), "marks are distinct");
        assertTrue(FileMarks.trySet(file, "user.csi4j.b"));
        FileMarks.clear(file, "user.csi4j.a");
        assertFalse(FileMarks.has(file, "user.csi4j.a"));
        assertTrue(FileMarks.has(file, "user.csi4j.b"));
        FileMarks.clear(file, "user.csi4j.a");   // clearing what is not there: nothing at all
        assertEquals("data", Files.readString(file), "a mark never touches the bytes");
    }

    @Test
    void aNamespaceTheKernelRefusesIsAnErrorNotASilentSkip() throws Exception {
        Path file = Files.writeString(dir.resolve("image"), "data");
        // no "user." prefix: EOPNOTSUPP from every filesystem; set must say so, trySet answers false
        OsException e = assertThrows(OsException.class, () -> FileMarks.set(file, "csi4j.unprefixed"));
        assertTrue(e.is(Errno.EOPNOTSUPP), e.getMessage());
        assertFalse(FileMarks.trySet(file, "csi4j.unprefixed"));
        assertFalse(FileMarks.has(file, "csi4j.unprefixed"));
        FileMarks.clear(file, "csi4j.unprefixed");
    }

    @Test
    void aMissingFileIsAnError() {
        assertThrows(OsException.class, () -> FileMarks.has(dir.resolve("missing"), "user.csi4j.a"));
    }
}
