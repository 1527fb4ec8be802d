package io.csi4j.driver.model;

/** How a volume is consumed: a formatted filesystem or a raw block device. */
public enum VolumeKind { FILESYSTEM, BLOCK }
