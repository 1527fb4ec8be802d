/**
 * What the domain packages ({@code volume/}, {@code snapshot/}, {@code group/}, {@code node/}, {@code mobility/})
 * share about failing: {@link io.csi4j.driver.domain.DomainException} and its {@link
 * io.csi4j.driver.domain.DomainException.Kind}. The domain says why; each edge ({@code csi/}, {@code addons/},
 * {@code cluster/}) has one mapper that picks the status code, as it does for storage's
 * {@link io.csi4j.driver.storage.StorageException}. Nothing here imports gRPC, wire types or the SDK.
 */
package io.csi4j.driver.domain;
