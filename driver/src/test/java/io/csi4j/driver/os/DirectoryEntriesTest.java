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

    /** A page that asks about most of the directory reads it instead of looking up each name: the same answer. */
    @Test
    void readingTheDirectoryAnswersAsTheLookupsDo() throws Exception {
        List<String> names = new java.util.ArrayList<>();
        Set<String> files = new java.util.HashSet<>();
        for (int i = 0; i < 200; i++) {
            String name = "v" + i + ".img";
            names.add(name);
            switch (i % 5) {
                case 0, 1 -> { Files.writeString(dir.resolve(name), "x"); files.add(name); }
                case 2 -> Files.createDirectory(dir.resolve(name));
                case 3 -> Files.createSymbolicLink(dir.resolve(name), dir.resolve("v0.img"));
                default -> { }  // missing
            }
        }
        Files.writeString(dir.resolve("\u00e9t\u00e9.img"), "x");
        names.add("\u00e9t\u00e9.img");
        files.add("\u00e9t\u00e9.img");
        Files.writeString(dir.resolve("v1.meta"), "{}");   // listed, not asked about
        assertEquals(files, DirectoryEntries.regularFiles(dir, names));
        // a few names out of a big directory: looked up one by one, same answer
        assertEquals(Set.of("v0.img"), DirectoryEntries.regularFiles(dir, List.of("v0.img", "v2.img", "v3.img", "v4.img")));
        List<String> withLong = new java.util.ArrayList<>(names);
        withLong.add("x".repeat(256));
        assertThrows(IllegalArgumentException.class, () -> DirectoryEntries.regularFiles(dir, withLong));
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
