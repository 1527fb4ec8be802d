package io.csi4j.driver.catalog;

import java.time.InstantSource;

/**
 * The catalog's tables over one {@link Session}, either each statement on its own ({@link Catalog}) or inside one
 * transaction ({@link CatalogTransaction}); they are made here for both.
 */
public abstract sealed class CatalogTables permits Catalog, CatalogTransaction {
    private final VolumeTable volumes;
    private final SnapshotTable snapshots;
    private final GroupSnapshotTable groupSnapshots;
    private final VolumeGroupTable volumeGroups;
    private final PublicationTable publications;
    private final TombstoneTable tombstones;

    CatalogTables(Session session, InstantSource clock) {
        volumes = new VolumeTable(session, clock);
        snapshots = new SnapshotTable(session, clock);
        groupSnapshots = new GroupSnapshotTable(session, clock);
        volumeGroups = new VolumeGroupTable(session, clock);
        publications = new PublicationTable(session);
        tombstones = new TombstoneTable(session);
    }

    public final VolumeTable volumes() { return volumes; }
    public final SnapshotTable snapshots() { return snapshots; }
    public final GroupSnapshotTable groupSnapshots() { return groupSnapshots; }
    public final VolumeGroupTable volumeGroups() { return volumeGroups; }
    public final PublicationTable publications() { return publications; }
    public final TombstoneTable tombstones() { return tombstones; }
}
