/**
 * The driver's catalog: the source of truth for what exists (volumes, snapshots, group snapshots, volume
 * groups and memberships, controller publications), in one SQLite file ({@code <data-dir>/catalog.db}) in
 * WAL mode, every write on disk before it returns (synchronous=FULL's guarantee, with the WAL sync shared
 * by concurrent writers: {@link io.csi4j.driver.catalog.GroupCommit}).
 *
 * <p>Every mutation of the driver is crash-safe with the fewest syncs its effect allows. Where the effect is
 * not derivable from the row (a snapshot, a clone, a restore, a group) it is intent, effect, commit: a row is
 * written in {@link io.csi4j.driver.model.State#CREATING} or moved to {@code DELETING} before the storage
 * effect, then moved to {@code READY} or deleted. A blank volume is derivable from its row, so its create is
 * effect (unsynced), then the row inserted READY: one sync. A volume's delete is the commit of the row's
 * delete with a {@link io.csi4j.driver.catalog.TombstoneTable tombstone} (one sync), then the unsynced
 * unlink. {@code setState} and {@code deleteInState} are compare-and-set, and {@code inState} and the
 * tombstones give the start-up reconciler what a crash left in between. Lists are keyset-paged on an AUTOINCREMENT {@code seq}.
 * Rows are read into the records of {@link io.csi4j.driver.model} (the domain model); nothing above the domain
 * reads the catalog. Nothing here stores secrets: there are no secret columns, and parameters are the StorageClass's.
 */
package io.csi4j.driver.catalog;
