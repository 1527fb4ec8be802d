/**
 * The driver's catalog: the source of truth for what exists (volumes, snapshots, group snapshots, volume
 * groups and memberships, controller publications), in one SQLite file ({@code <data-dir>/catalog.db}) in
 * WAL mode, every write on disk before it returns (synchronous=FULL's guarantee, with the WAL sync shared
 * by concurrent writers: {@link io.csi4j.driver.catalog.GroupCommit}).
 *
 * <p>Every mutation of the driver is intent, effect, commit: a row is written in {@link
 * io.csi4j.driver.catalog.State#CREATING} or moved to {@code DELETING} before the storage effect, then
 * moved to {@code READY} or deleted. {@code setState} is compare-and-set, and {@code inState} gives the
 * start-up reconciler the rows left in between. Lists are keyset-paged on an AUTOINCREMENT {@code seq}.
 * Nothing here stores secrets: there are no secret columns, and parameters are the StorageClass's.
 */
package io.csi4j.driver.catalog;
