package io.csi4j.driver.catalog;

/** How a volume is consumed: a formatted filesystem or a raw block device. */
public enum VolumeKind { FILESYSTEM, BLOCK }
