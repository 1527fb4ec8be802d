package io.csi4j.driver.volume;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.catalog.Catalog;
import io.csi4j.driver.catalog.ReferenceException;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.id.ObjectId;
import io.csi4j.driver.id.ObjectId.Kind;
import io.csi4j.driver.id.ReplicatedVolumeId;
import io.csi4j.driver.model.PublicationRecord;
import io.csi4j.driver.model.VolumeRecord;
import java.time.InstantSource;
import java.util.Map;

/**
 * ControllerPublishVolume and ControllerUnpublishVolume: bookkeeping only, one catalog row per volume and node (the
 * node side attaches). A publication exists only for this plugin's node; a repeat with the same arguments answers
 * with the same context, a different one is ALREADY_EXISTS; {@code maxVolumesPerNode} bounds the rows of a node.
 * DeleteVolume refuses a published volume, in its commit.
 */
public final class VolumePublications {
    private final Catalog catalog;
    private final DriverConfig config;
    private final InstantSource clock;
    private final VolumeReads reads;

    VolumePublications(Catalog catalog, DriverConfig config, InstantSource clock, VolumeReads reads) {
        this.catalog = catalog;
        this.config = config;
        this.clock = clock;
        this.reads = reads;
    }

    public Map<String, String> publish(String volumeId, String nodeId, Capability capability, boolean readOnly) {
        VolumeRecord v = reads.readyVolume(volumeId, "volume");
        if (!nodeId.equals(config.nodeId())) {
            throw DomainException.notFound("node " + nodeId + " does not exist for this plugin (it serves node "
                    + config.nodeId() + ")");
        }
        VolumeRules.requireSupported(v, capability);
        var existing = catalog.publications().get(volumeId, nodeId);
        if (existing.isPresent()) {
            var p = existing.get();
            if (p.readOnly() != readOnly || !p.accessMode().equals(capability.mode().name())) {
                throw DomainException.exists("volume " + volumeId + " is already published to node " + nodeId
                        + " with readonly=" + p.readOnly() + " and access mode " + p.accessMode());
            }
            return p.publishContext();
        }
        if (config.maxVolumesPerNode() > 0 && catalog.publications().onNode(nodeId).size() >= config.maxVolumesPerNode()) {
            throw DomainException.exhausted("node " + nodeId + " already has the maximum of "
                    + config.maxVolumesPerNode() + " volumes published");
        }
        var publication = new PublicationRecord(volumeId, nodeId, readOnly, capability.mode().name(), Map.of(), clock.instant());
        try {
            catalog.publications().insert(publication);
        } catch (ReferenceException deletedMeanwhile) {
            // DeleteVolumeGroup deletes member volumes under the group's key, not the volume's
            throw DomainException.notFound("volume " + volumeId + " does not exist");
        }
        return publication.publishContext();
    }

    /** Idempotent: an id that is not a volume's, or a publication that is gone, is done; an empty node is every node. */
    public void unpublish(String volumeId, String nodeId) {
        if (ObjectId.parse(Kind.VOLUME, volumeId).isEmpty() && !ReplicatedVolumeId.isReplicated(volumeId)) return;
        if (nodeId.isEmpty()) {
            catalog.publications().ofVolume(volumeId).forEach(p -> catalog.publications().delete(volumeId, p.nodeId()));
        } else {
            catalog.publications().delete(volumeId, nodeId);
        }
    }
}
