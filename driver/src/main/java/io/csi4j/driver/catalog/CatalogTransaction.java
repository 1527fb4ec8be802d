package io.csi4j.driver.catalog;

import java.time.InstantSource;

/**
 * The tables as seen inside {@link Catalog#inTransaction}: every statement runs on the writer connection
 * in one transaction, and reads see its own uncommitted writes. Valid only in the body, on its thread.
 */
public final class CatalogTransaction implements CatalogTables {
    private final VolumeTable volumes;
    private final SnapshotTable snapshots;
    private final GroupSnapshotTable groupSnapshots;
    private final VolumeGroupTable volumeGroups;
    private final PublicationTable publications;
    private final TombstoneTable tombstones;

    CatalogTransaction(Session session, InstantSource clock) {
        volumes = new VolumeTable(session, clock);
        snapshots = new SnapshotTable(session, clock);
        groupSnapshots = new GroupSnapshotTable(session, clock);
        volumeGroups = new VolumeGroupTable(session, clock);
        publications = new PublicationTable(session);
        tombstones = new TombstoneTable(session);
    }

    @Override public VolumeTable volumes() { return volumes; }
    @Override public SnapshotTable snapshots() { return snapshots; }
    @Override public GroupSnapshotTable groupSnapshots() { return groupSnapshots; }
    @Override public VolumeGroupTable volumeGroups() { return volumeGroups; }
    @Override public PublicationTable publications() { return publications; }
    @Override public TombstoneTable tombstones() { return tombstones; }
}
