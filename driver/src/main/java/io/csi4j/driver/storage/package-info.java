/**
 * What the storage core (catalog, engines, OS bindings) says when it fails: {@link
 * io.csi4j.driver.storage.StorageException} with a reason. Nothing in those packages knows gRPC; the CSI layer
 * maps reasons to status codes in one place.
 */
package io.csi4j.driver.storage;
