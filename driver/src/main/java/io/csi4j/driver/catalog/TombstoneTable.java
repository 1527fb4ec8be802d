package io.csi4j.driver.catalog;

import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * Volumes whose row is deleted but whose files may still be in the pool. DeleteVolume commits the row's
 * delete and its tombstone together (the one sync of the call), then unlinks without syncing; a tombstone
 * is dropped once a later sync of the pool's directory made the unlink durable. Whatever a crash or a power
 * cut left is removed by the start-up sweep because a tombstone names it, never because no row owns it.
 */
public final class TombstoneTable {
    private static final String INSERT = "INSERT INTO volume_tombstones (id) VALUES (?) ON CONFLICT (id) DO NOTHING";
    private static final String DELETE = "DELETE FROM volume_tombstones WHERE id = ?";
    private static final String ALL = "SELECT id FROM volume_tombstones ORDER BY id";
    private static final String COUNT = "SELECT count(*) FROM volume_tombstones";

    private final Session session;

    TombstoneTable(Session session) {
        this.session = session;
    }

    public void add(String volumeId) {
        Objects.requireNonNull(volumeId, "volumeId");
        session.write(c -> Rows.update(c, INSERT, volumeId));
    }

    /** Drops the tombstones of volumes whose files are durably gone. */
    public void remove(Collection<String> volumeIds) {
        if (volumeIds.isEmpty()) return;
        session.write(c -> {
            for (String id : volumeIds) Rows.update(c, DELETE, id);
            return null;
        });
    }

    public List<String> volumeIds() {
        return session.read(c -> Rows.list(c, ALL, row -> row.getString(1)));
    }

    public long count() {
        return session.read(c -> Rows.count(c, COUNT));
    }
}
