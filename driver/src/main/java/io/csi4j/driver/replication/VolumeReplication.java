package io.csi4j.driver.replication;

/**
 * CSI-Addons VolumeReplication as csi4j means it within one cluster (docs/replication.md, "CSI-Addons
 * VolumeReplication"). Refusals are {@link io.csi4j.driver.domain.DomainException}s; the edge picks the codes.
 * Only the cluster controller implements it: a lone plugin holds no replicated volume and does not serve the service.
 */
public interface VolumeReplication {
    /** OK for a replicated volume (replication is on from its creation); PRECONDITION for an ordinary one. */
    void enable(String volumeId);

    /** OK for an ordinary volume (nothing replicates it); PRECONDITION for a replicated one (its set is fixed). */
    void disable(String volumeId);

    /** A primary serves the volume afterwards; {@code force} allows a failover to the freshest answering secondary. */
    void promote(String volumeId, boolean force);

    /** The primary steps down towards the freshest secondary (first half of a handoff); only while unpublished. */
    void demote(String volumeId, boolean force);

    /** A round now on every secondary; true when every copy holds the point just cut. */
    boolean resync(String volumeId, boolean force);

    /** The freshest secondary's last complete round. */
    RoundLog.Round info(String volumeId);
}
