package io.csi4j.driver.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataDirTest {
    @TempDir
    Path root;

    @Test
    void namesWhatLivesThere() {
        DataDir dir = new DataDir(root);
        assertEquals(root.resolve("csi.sock"), dir.csiSocket());
        assertEquals("unix://" + root.resolve("csi-addons.sock"), dir.addonsEndpoint());
        assertEquals(root.resolve("pool"), dir.pool());
        assertEquals(root.resolve("pool.img"), dir.poolImage());
        assertEquals(root.resolve("catalog.db"), dir.catalog());
        assertEquals(root.resolve("page-token.key"), dir.pageTokenKey());
    }

    @Test
    void poolImageBytesIsTheSizeOfARegularFileOnly() throws IOException {
        DataDir dir = new DataDir(root);
        assertEquals(OptionalLong.empty(), dir.poolImageBytes(), "no image");
        Path elsewhere = Files.write(root.resolve("elsewhere.img"), new byte[4096]);
        Files.createSymbolicLink(dir.poolImage(), elsewhere);
        assertEquals(OptionalLong.empty(), dir.poolImageBytes(), "a link is not followed");
        Files.delete(dir.poolImage());
        Files.write(dir.poolImage(), new byte[8192]);
        assertEquals(OptionalLong.of(8192), dir.poolImageBytes());
    }
}
