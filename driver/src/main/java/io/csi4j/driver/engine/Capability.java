package io.csi4j.driver.engine;

/**
 * Something an engine offers beyond its core ({@link PoolStorage}), or not: a small interface of its own, found by
 * type with {@link PoolStorage#capability}. An engine registers the capabilities it has in its {@link Capabilities};
 * a caller that finds none raises the error it would raise for an engine that cannot do it. A new capability is a
 * new interface extending this one, a class implementing it and one registration line in the engine: nothing that
 * exists is edited.
 */
public interface Capability {
}
