package io.csi4j.driver.volume;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.domain.DomainException;
import io.csi4j.driver.engine.PoolStorage;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.model.State;
import io.csi4j.driver.model.VolumeKind;
import io.csi4j.driver.model.VolumeRecord;
import io.csi4j.driver.storage.StorageException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a volume request may ask of this node, checked against the engine's capabilities and the node's config, and
 * nothing else: no catalog, no writes. CreateVolume runs these checks before any row or artifact exists;
 * ValidateVolumeCapabilities, ControllerPublish and ControllerExpand ask the same questions of an existing volume.
 * A refusal is a {@link DomainException} (its kind picks the code at the edge); a question ("why not?") answers
 * with the refusal's message instead.
 */
public final class VolumeRules {
    /** StorageClass parameter placing a new volume into an existing CSI-Addons volume group. */
    public static final String PARAM_VOLUME_GROUP = "csi4j.io/volume-group";
    /** Keys the Kubernetes provisioner adds with --extra-create-metadata; accepted and kept. */
    public static final String KUBERNETES_PREFIX = "csi.storage.k8s.io/";
    private static final Set<String> KNOWN_PARAMETERS = Set.of(PARAM_VOLUME_GROUP, Provisioning.PARAMETER,
            ReplicationParameters.REPLICAS, ReplicationParameters.INTERVAL, ReplicationParameters.SPREAD_KEY);

    private final PoolStorage engine;
    private final DriverConfig config;

    public VolumeRules(PoolStorage engine, DriverConfig config) {
        this.engine = engine;
        this.config = config;
    }

    /**
     * CreateVolume's parameters: known keys only, a provisioning the engine can serve, valid replication keys.
     * {@code replica}: the primary's volume of a replicated volume, made by the cluster controller's request.
     */
    void checkParameters(Map<String, String> parameters, boolean replica) {
        var unknown = new TreeSet<String>();
        for (String key : parameters.keySet()) {
            if (!KNOWN_PARAMETERS.contains(key) && !key.startsWith(KUBERNETES_PREFIX)) unknown.add(key);
        }
        if (!unknown.isEmpty()) {
            throw DomainException.invalid("unknown parameters " + unknown + "; known: " + new TreeSet<>(KNOWN_PARAMETERS)
                    + " and keys starting with " + KUBERNETES_PREFIX);
        }
        Provisioning.of(parameters, engine);   // a value other than thin or thick, or thick where the engine has none
        var replication = ReplicationParameters.of(parameters);              // INVALID for a bad value
        if (replication.replicated() && !replica) {
            // One node cannot hold replicas on distinct nodes: as a request for more room than exists.
            throw DomainException.exhausted(ReplicationParameters.REPLICAS + "=" + replication.replicas()
                    + " needs " + replication.replicas() + " distinct nodes; this plugin holds volumes on node '"
                    + config.nodeId() + "' only, replicated volumes are made by a cluster"
                    + " controller (docs/replication.md)");
        }
    }

    /** CreateVolume's mutable parameters (a VolumeAttributesClass), if any: what the engine would refuse. */
    void checkMutableParameters(Map<String, String> parameters, Map<String, String> mutableParameters) {
        if (mutableParameters.isEmpty()) return;
        // a replicated volume's interval is kept in the row (it overrides the parameters'); the rest is the engine's
        var engineKeys = ReplicationParameters.checkCreate(parameters, mutableParameters);
        MutableParameters.validate(engineKeys);
        engine.checkMutableParameters(engineKeys);     // not after the effect: nothing to roll back
    }

    /** RESOURCE_EXHAUSTED when the request's accessibility requirements leave this node out. */
    void checkTopology(NewVolume request) {
        request.allowedNodes().ifPresent(nodes -> {
            if (!nodes.contains(config.topologyValue())) {
                throw DomainException.exhausted("accessibility requirements allow nodes " + nodes
                        + " but this plugin provisions on node " + config.nodeId());
            }
        });
    }

    /** Why these capabilities can't be served by this volume, or empty if they can. */
    public static Optional<String> unsupported(VolumeRecord v, List<Capability> capabilities) {
        for (Capability c : capabilities) {
            if (c.mode().multiNode()) return Optional.of("access mode " + c.mode() + " needs more than one node");
            if (c.kind() != v.kind()) return Optional.of("volume is " + v.kind().name().toLowerCase() + ", not " + c.kind().name().toLowerCase());
            if (c.kind() == VolumeKind.FILESYSTEM && !c.fsType().isEmpty() && !c.fsType().equals(VolumeShape.fsTypeOf(v))) {
                return Optional.of("volume's fs_type is " + VolumeShape.fsTypeOf(v) + ", not " + c.fsType());
            }
        }
        return Optional.empty();
    }

    /** INVALID_ARGUMENT when {@code capability} is not one the volume serves. */
    public static void requireSupported(VolumeRecord v, Capability capability) {
        unsupported(v, List.of(capability)).ifPresent(why -> { throw DomainException.invalid(why); });
    }

    /**
     * Why ValidateVolumeCapabilities does not confirm what it was asked of a READY volume {@code v}, or empty if it
     * does: everything asked must hold, the capabilities, the parameters and the volume's own context.
     */
    public Optional<String> unconfirmed(VolumeRecord v, List<Capability> capabilities, Map<String, String> parameters,
                                        Map<String, String> mutableParameters, Map<String, String> volumeContext) {
        Map<String, String> context = v.context();
        return unsupported(v, capabilities)
                .or(() -> unsupportedParameters(parameters, mutableParameters))
                .or(() -> volumeContext.isEmpty() || volumeContext.equals(context) ? Optional.empty()
                        : Optional.of("volume_context " + volumeContext + " is not this volume's " + context));
    }

    /** Why these creation parameters would not be accepted (ValidateVolumeCapabilities), or empty if they would. */
    public Optional<String> unsupportedParameters(Map<String, String> parameters, Map<String, String> mutableParameters) {
        try {
            checkParameters(parameters, false);
            checkMutableParameters(parameters, mutableParameters);   // what CreateVolume would refuse is not confirmed
            return Optional.empty();
        } catch (DomainException | StorageException e) {
            return Optional.of(e.getMessage());
        }
    }

    /**
     * Idempotency by name: the existing volume {@code v} answers a repeated CreateVolume when it is READY and
     * matches what is asked; ABORTED while it is being created or deleted, ALREADY_EXISTS naming every difference.
     */
    static VolumeRecord existingIfCompatible(VolumeRecord v, NewVolume request, VolumeShape shape) {
        if (v.state() != State.READY) {
            throw DomainException.aborted("volume '" + v.name() + "' is being " + (v.state() == State.CREATING ? "created" : "deleted"));
        }
        List<String> differences = new ArrayList<>();
        if (!request.range().admits(v.capacityBytes()) && !request.range().equals(CapacityRange.ANY)) {
            differences.add("capacity " + v.capacityBytes() + " is outside the requested range");
        }
        if (v.kind() != shape.kind()) differences.add("it is a " + v.kind().name().toLowerCase() + " volume");
        if (shape.kind() == VolumeKind.FILESYSTEM && !VolumeShape.fsTypeOf(v).equals(shape.fsType())) {
            differences.add("its fs_type is " + VolumeShape.fsTypeOf(v));
        }
        if (!v.source().equals(request.source())) differences.add("its content source is " + describe(v.source()));
        if (!v.parameters().equals(request.parameters())) differences.add("its parameters are " + v.parameters());
        if (!differences.isEmpty()) {
            throw DomainException.exists("volume '" + v.name() + "' already exists (" + v.id() + ") but "
                    + String.join("; ", differences));
        }
        return v;
    }

    private static String describe(ContentSource source) {
        return switch (source) {
            case ContentSource.None none -> "empty";
            case ContentSource.FromSnapshot s -> "snapshot " + s.snapshotId();
            case ContentSource.FromVolume v -> "volume " + v.volumeId();
        };
    }
}
