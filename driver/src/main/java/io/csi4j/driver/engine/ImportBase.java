package io.csi4j.driver.engine;

/**
 * What an import starts from ({@link DataMover#beginImport}): a {@link Replica} of a point this node keeps, or a
 * {@link StillImage} of the volume's own image (a fenced old primary that follows: a base to build from, never a point).
 */
public sealed interface ImportBase permits Replica, StillImage {}
