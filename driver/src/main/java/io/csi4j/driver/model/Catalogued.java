package io.csi4j.driver.model;

/** An object the catalog keeps by id through the intent/commit life cycle ({@link State}). */
public sealed interface Catalogued permits VolumeRecord, SnapshotRecord, GroupSnapshotRecord, VolumeGroupRecord {
    String id();

    State state();
}
