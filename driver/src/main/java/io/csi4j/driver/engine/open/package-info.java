/**
 * Opening an engine: {@link io.csi4j.driver.engine.open.Engines#open} picks the engine of an
 * {@link io.csi4j.driver.engine.EngineKind} and opens it on the data directory's pool. It lives above both
 * {@code engine} (the core, the capabilities, the dir engine) and {@code engine.image}, so that neither of those
 * packages names the other back: the import graph stays acyclic.
 */
package io.csi4j.driver.engine.open;
