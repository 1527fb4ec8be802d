/**
 * Putting a node's data directory right: the start-up {@code Reconciler} (catalog against pool and kernel),
 * fsck's {@code CatalogRebuild} (a catalog from the pool's sidecars), and {@code NodeTeardown} (what a stopped
 * plugin left in the kernel, removed by {@code csi4j teardown}).
 */
package io.csi4j.driver.reconcile;
