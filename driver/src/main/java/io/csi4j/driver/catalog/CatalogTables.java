package io.csi4j.driver.catalog;

/** The catalog's tables, either each statement on its own ({@link Catalog}) or inside one transaction. */
public sealed interface CatalogTables permits Catalog, CatalogTransaction {
    VolumeTable volumes();

    SnapshotTable snapshots();

    GroupSnapshotTable groupSnapshots();

    VolumeGroupTable volumeGroups();

    PublicationTable publications();

    TombstoneTable tombstones();
}
