package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DirectoryEntriesTest {
    @TempDir
    Path dir;

    @Test
    void regularFilesOnlyWithoutFollowingSymlinks() throws Exception {
        Files.writeString(dir.resolve("file.img"), "x");
        Files.createDirectory(dir.resolve("dir.img"));
        Files.createSymbolicLink(dir.resolve("link.img"), dir.resolve("file.img"));
        Files.createSymbolicLink(dir.resolve("dangling.img"), dir.resolve("nowhere"));
        assertEquals(Set.of("file.img"), DirectoryEntries.regularFiles(dir,
                List.of("file.img", "dir.img", "link.img", "dangling.img", "missing.img", "\u00e9t\u00e9.img")));
        Files.writeString(dir.resolve("\u00e9t\u00e9.img"), "x");
        assertEquals(Set.of("\u00e9t\u00e9.img"), DirectoryEntries.regularFiles(dir, List.of("\u00e9t\u00e9.img")));
        assertEquals(Set.of(), DirectoryEntries.regularFiles(dir, List.of()));
    }

    @Test
    void refusesNamesThatAreNotPlain() {
        assertThrows(IllegalArgumentException.class, () -> DirectoryEntries.regularFiles(dir, List.of("a/b")));
        assertThrows(IllegalArgumentException.class, () -> DirectoryEntries.regularFiles(dir, List.of("x".repeat(256))));
        assertThrows(OsException.class, () -> DirectoryEntries.regularFiles(dir.resolve("missing"), List.of("a")));
    }

    @Test
    void aFileWhereADirectoryShouldBeIsAnError() throws Exception {
        Files.writeString(dir.resolve("plain"), "x");
        // the walk through a file: ENOTDIR, not "absent"
        assertThrows(OsException.class, () -> DirectoryEntries.regularFiles(dir.resolve("plain"), List.of("a")));
    }
}
