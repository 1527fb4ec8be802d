package io.csi4j.driver.model;

/** One entry of a ListVolumes page: what the listing shows of a READY volume, with its status. */
public record ListedVolume(VolumeListing volume, VolumeStatus status) {}
