package io.csi4j.driver.catalog;

import java.util.List;

/**
 * The catalog schema as its list of migrations. Every table is STRICT, times are epoch nanoseconds, maps
 * are JSON text, and {@code seq} is AUTOINCREMENT so a deleted row's seq is never handed out again (page
 * positions stay valid). There are no secret columns, by design.
 */
final class Schema {
    private Schema() {}

    static final List<Migration> MIGRATIONS = Migration.checkOrder(List.of(
            new Migration(1, List.of(
                    """
                    CREATE TABLE volumes (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        capacity_bytes INTEGER NOT NULL CHECK (capacity_bytes >= 0),
                        kind TEXT NOT NULL CHECK (kind IN ('FILESYSTEM', 'BLOCK')),
                        fs_type TEXT,
                        parameters TEXT NOT NULL,
                        mutable_parameters TEXT NOT NULL,
                        source_kind TEXT NOT NULL CHECK (source_kind IN ('NONE', 'SNAPSHOT', 'VOLUME')),
                        source_id TEXT,
                        node_id TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('CREATING', 'READY', 'DELETING')),
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        CHECK ((source_kind = 'NONE') = (source_id IS NULL))
                    ) STRICT""",
                    "CREATE UNIQUE INDEX volumes_id ON volumes (id)",
                    "CREATE UNIQUE INDEX volumes_name ON volumes (name)",
                    "CREATE INDEX volumes_state ON volumes (state)",
                    """
                    CREATE TABLE group_snapshots (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        source_volume_ids TEXT NOT NULL,
                        parameters TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('CREATING', 'READY', 'DELETING')),
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL
                    ) STRICT""",
                    "CREATE UNIQUE INDEX group_snapshots_id ON group_snapshots (id)",
                    "CREATE UNIQUE INDEX group_snapshots_name ON group_snapshots (name)",
                    "CREATE INDEX group_snapshots_state ON group_snapshots (state)",
                    """
                    CREATE TABLE snapshots (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL,
                        name TEXT,
                        source_volume_id TEXT NOT NULL,
                        size_bytes INTEGER NOT NULL CHECK (size_bytes >= 0),
                        group_snapshot_id TEXT REFERENCES group_snapshots (id),
                        parameters TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('CREATING', 'READY', 'DELETING')),
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        CHECK (name IS NOT NULL OR group_snapshot_id IS NOT NULL)
                    ) STRICT""",
                    "CREATE UNIQUE INDEX snapshots_id ON snapshots (id)",
                    "CREATE UNIQUE INDEX snapshots_name ON snapshots (name)",
                    "CREATE INDEX snapshots_source_volume ON snapshots (source_volume_id)",
                    "CREATE INDEX snapshots_group_snapshot ON snapshots (group_snapshot_id)",
                    "CREATE INDEX snapshots_state ON snapshots (state)",
                    """
                    CREATE TABLE volume_groups (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        parameters TEXT NOT NULL,
                        state TEXT NOT NULL CHECK (state IN ('CREATING', 'READY', 'DELETING')),
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL
                    ) STRICT""",
                    "CREATE UNIQUE INDEX volume_groups_id ON volume_groups (id)",
                    "CREATE UNIQUE INDEX volume_groups_name ON volume_groups (name)",
                    "CREATE INDEX volume_groups_state ON volume_groups (state)",
                    """
                    CREATE TABLE volume_group_members (
                        group_id TEXT NOT NULL REFERENCES volume_groups (id) ON DELETE CASCADE,
                        volume_id TEXT NOT NULL REFERENCES volumes (id) ON DELETE CASCADE,
                        PRIMARY KEY (group_id, volume_id)
                    ) STRICT, WITHOUT ROWID""",
                    "CREATE INDEX volume_group_members_volume ON volume_group_members (volume_id, group_id)",
                    """
                    CREATE TABLE publications (
                        volume_id TEXT NOT NULL REFERENCES volumes (id),
                        node_id TEXT NOT NULL,
                        read_only INTEGER NOT NULL CHECK (read_only IN (0, 1)),
                        access_mode TEXT NOT NULL,
                        publish_context TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        PRIMARY KEY (volume_id, node_id)
                    ) STRICT, WITHOUT ROWID""",
                    "CREATE INDEX publications_node ON publications (node_id, volume_id)")),
            // A volume's row is deleted (the commit of DeleteVolume) in the same transaction that records its
            // tombstone; its files are unlinked afterwards without a sync. A tombstone says "these files may still
            // be on disk and are to be removed", so the start-up sweep removes them without trusting an absent row.
            new Migration(2, List.of(
                    """
                    CREATE TABLE volume_tombstones (
                        id TEXT NOT NULL PRIMARY KEY
                    ) STRICT, WITHOUT ROWID"""))));

    static int latestVersion(List<Migration> migrations) {
        return migrations.isEmpty() ? 0 : migrations.getLast().version();
    }
}
