package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.catalog.Catalog;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a "lost" volume's diagnosis in {@link PowerCutChecks} says of the clone before the boot: the volume's row
 * (state, capacity, source), a tombstone, its volume group, its files. Read from a real catalog, as the plugin wrote it.
 */
class PowerCutBootStateTest {
    @Test
    void describesRowTombstoneGroupAndFiles(@TempDir Path dir) throws Exception {
        try (Catalog ignored = Catalog.openIn(dir)) {
            // made by the plugin's own schema; rows written here as a cut might have left them
        }
        try (var c = DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("catalog.db"))) {
            c.createStatement().execute("INSERT INTO volumes (id, name, capacity_bytes, kind, fs_type, parameters, mutable_parameters,"
                    + " source_kind, source_id, node_id, state, created_at, updated_at) VALUES ('vol-a-node-1', 'a', 402653184,"
                    + " 'FILESYSTEM', 'xfs', '{}', '{}', 'NONE', NULL, 'node-1', 'DELETING', 0, 0)");
            c.createStatement().execute("INSERT INTO volume_groups (id, name, parameters, state, created_at, updated_at)"
                    + " VALUES ('vg-g-node-1', 'g', '{}', 'DELETING', 0, 0)");
            c.createStatement().execute("INSERT INTO volume_group_members (group_id, volume_id) VALUES ('vg-g-node-1', 'vol-a-node-1')");
            c.createStatement().execute("INSERT INTO volume_tombstones (id) VALUES ('vol-b-node-1')");
        }
        var boot = new PowerCutChecks.BootState(dir.resolve("catalog.db"), Set.of("vol-a-node-1.img", "vol-a-node-1.meta", "vol-c-node-1.img"));
        assertEquals("row DELETING 402653184 NONE, in volume group vg-g-node-1; files [vol-a-node-1.img, vol-a-node-1.meta]",
                boot.describe("vol-a-node-1"));
        assertEquals("no row, a tombstone; files none", boot.describe("vol-b-node-1"));
        assertEquals("catalog not read", new PowerCutChecks.BootState(dir.resolve("absent/catalog.db"), Set.of()).describe("x")
                .replaceAll(" \\(.*", ""));
    }
}
