package io.csi4j.testkit.suite;

import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CLONE_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.EXPAND_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.GET_CAPACITY;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.GET_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.LIST_VOLUMES;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.LIST_VOLUMES_PUBLISHED_NODES;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.MODIFY_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.PUBLISH_UNPUBLISH_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.VOLUME_CONDITION;
import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.fails;
import static io.csi4j.testkit.suite.Verdicts.failsWithOneOf;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.csi.CapacityRange;
import io.csi4j.proto.csi.ControllerExpandVolumeRequest;
import io.csi4j.proto.csi.ControllerExpandVolumeResponse;
import io.csi4j.proto.csi.ControllerGetCapabilitiesRequest;
import io.csi4j.proto.csi.ControllerGetVolumeRequest;
import io.csi4j.proto.csi.ControllerGetVolumeResponse;
import io.csi4j.proto.csi.ControllerModifyVolumeRequest;
import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.GetCapacityRequest;
import io.csi4j.proto.csi.GetCapacityResponse;
import io.csi4j.proto.csi.ListVolumesResponse;
import io.csi4j.proto.csi.ValidateVolumeCapabilitiesRequest;
import io.csi4j.proto.csi.ValidateVolumeCapabilitiesResponse;
import io.csi4j.proto.csi.Volume;
import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeContentSource;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import io.csi4j.proto.csi.NodeGetInfoRequest;
import io.csi4j.proto.csi.PluginCapability;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.atomic.AtomicReference;

/** The Controller service, object by object: volumes, publication, validation, capacity, expansion, modification. */
final class ControllerTests {
    private ControllerTests() {}

    static final String CONTROLLER = "Controller/";

    static List<SanityTest> tests() {
        Catalog c = new Catalog();
        capabilities(c);
        createVolume(c);
        deleteVolume(c);
        validate(c);
        getVolume(c);
        listVolumes(c);
        capacity(c);
        expand(c);
        modify(c);
        return c.tests();
    }

    /** Calls CreateVolume and, should the plugin create something, registers it for deletion. */
    static CreateVolumeResponse tryCreate(TestContext ctx, CreateVolumeRequest request) {
        CreateVolumeResponse answer = ctx.controller().createVolume(request);
        if (!answer.getVolume().getVolumeId().isEmpty()) ctx.trackVolume(answer.getVolume().getVolumeId());
        return answer;
    }

    static DeleteVolumeRequest delete(TestContext ctx, String volumeId) {
        return DeleteVolumeRequest.newBuilder().setVolumeId(volumeId).putAllSecrets(ctx.secrets()).build();
    }

    private static void capabilities(Catalog c) {
        c.add("Controller/ControllerGetCapabilities/returns only known capabilities", Requirement.controllerService(), ctx -> {
            var answer = ok("ControllerGetCapabilities: a Controller Plugin MUST implement this RPC",
                    () -> ctx.controller().controllerGetCapabilities(ControllerGetCapabilitiesRequest.getDefaultInstance()));
            for (ControllerServiceCapability cap : answer.getCapabilitiesList()) {
                check(cap.hasRpc() && cap.getRpc().getType() != ControllerServiceCapability.RPC.Type.UNKNOWN
                                && cap.getRpc().getType() != ControllerServiceCapability.RPC.Type.UNRECOGNIZED,
                        "ControllerGetCapabilities reports capabilities the spec defines", () -> Verdicts.oneLine(cap));
            }
        });
        c.add("Controller/ControllerGetCapabilities/LIST_VOLUMES_PUBLISHED_NODES comes with PUBLISH_UNPUBLISH_VOLUME",
                Requirement.controller(LIST_VOLUMES_PUBLISHED_NODES), ctx ->
                        check(ctx.caps().has(PUBLISH_UNPUBLISH_VOLUME),
                                "LIST_VOLUMES_PUBLISHED_NODES: the SP MUST also support PUBLISH_UNPUBLISH_VOLUME",
                                () -> "PUBLISH_UNPUBLISH_VOLUME is not advertised"));
    }

    private static void createVolume(Catalog c) {
        Requirement create = Requirement.controller(CREATE_DELETE_VOLUME);
        String p = CONTROLLER + "CreateVolume";

        c.add(p + "/creates a volume of at least the requested size", create, ctx -> {
            Volume v = ctx.createVolume("volume");
            check(v.getCapacityBytes() >= 0, "Volume.capacity_bytes MUST NOT be negative", () -> Long.toString(v.getCapacityBytes()));
            check(v.getAccessibleTopologyCount() == 0 || ctx.caps().has(PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS),
                    "Volume.accessible_topology: a plugin that returns this field MUST also set the VOLUME_ACCESSIBILITY_CONSTRAINTS plugin capability",
                    () -> "accessible_topology without the capability");
            Topologies.verify(v.getAccessibleTopologyList(), "Volume.accessible_topology");
        });

        c.add(p + "/repeated identical requests return the same volume", create, ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("idempotent")).build();
            Volume first = ctx.createVolume(request);
            for (int i = 1; i < ctx.repeats(); i++) {
                Volume again = ok("CreateVolume MUST be idempotent: an existing, compatible volume of that name MUST reply OK",
                        () -> tryCreate(ctx, request)).getVolume();
                check(again.getVolumeId().equals(first.getVolumeId()),
                        "CreateVolume MUST be idempotent: repeated calls with one name MUST return the same volume",
                        () -> "volume_id " + again.getVolumeId() + " after " + first.getVolumeId());
                check(again.getCapacityBytes() == first.getCapacityBytes() && again.getVolumeContextMap().equals(first.getVolumeContextMap()),
                        "CreateVolume MUST be idempotent: the corresponding CreateVolumeResponse for the existing volume",
                        () -> "capacity/context " + again.getCapacityBytes() + "/" + again.getVolumeContextMap()
                                + " after " + first.getCapacityBytes() + "/" + first.getVolumeContextMap());
            }
        });

        c.add(p + "/the same name with a different size fails with ALREADY_EXISTS", create, ctx -> {
            long size = ctx.volumeSize();
            String name = ctx.name("conflict");
            ctx.createVolume(ctx.volumeRequest(name)
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(size).setLimitBytes(size)).build());
            CreateVolumeRequest bigger = ctx.volumeRequest(name)
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(2 * size).setLimitBytes(2 * size)).build();
            fails(Status.Code.ALREADY_EXISTS,
                    "CreateVolume: a volume of that name that is incompatible with the capacity_range MUST fail with ALREADY_EXISTS",
                    () -> tryCreate(ctx, bigger));
        });

        c.missing(p, "name", create, ctx -> () -> tryCreate(ctx, ctx.volumeRequest("").build()));
        c.missing(p, "volume_capabilities", create, ctx -> () -> tryCreate(ctx, ctx.volumeRequest(ctx.name("nocaps")).clearVolumeCapabilities().build()));
        c.missing(p, "volume_capabilities.access_mode", create, ctx -> {
            VolumeCapability noMode = ctx.capability().toBuilder().clearAccessMode().build();
            return () -> tryCreate(ctx, ctx.volumeRequest(ctx.name("nomode")).clearVolumeCapabilities().addVolumeCapabilities(noMode).build());
        });
        c.missing(p, "volume_capabilities.access_type", create, ctx -> {
            VolumeCapability noType = ctx.capability().toBuilder().clearAccessType().build();
            return () -> tryCreate(ctx, ctx.volumeRequest(ctx.name("notype")).clearVolumeCapabilities().addVolumeCapabilities(noType).build());
        });

        c.add(p + "/a name with a control character fails with INVALID_ARGUMENT", create, ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("bad") + "\u0007").build();
            fails(Status.Code.INVALID_ARGUMENT,
                    "CreateVolume.name MUST NOT contain U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F; an invalid field MUST fail with INVALID_ARGUMENT",
                    () -> tryCreate(ctx, request));
        });

        c.add(p + "/a name longer than 128 bytes fails with INVALID_ARGUMENT", create, ctx -> {
            String name = (ctx.name("long") + "-" + "x".repeat(128)).substring(0, 129);
            fails(Status.Code.INVALID_ARGUMENT,
                    "CreateVolume.name: strings SHALL NOT exceed 128 bytes; an invalid field MUST fail with INVALID_ARGUMENT",
                    () -> tryCreate(ctx, ctx.volumeRequest(name).build()));
        });

        c.add(p + "/a negative required_bytes fails with INVALID_ARGUMENT or OUT_OF_RANGE", create, ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("negative")).setCapacityRange(TestContext.required(-1)).build();
            failsWithOneOf("CapacityRange.required_bytes MUST NOT be negative; an invalid field MUST fail with INVALID_ARGUMENT (or OUT_OF_RANGE, unsupported capacity_range)",
                    () -> tryCreate(ctx, request), Status.Code.INVALID_ARGUMENT, Status.Code.OUT_OF_RANGE);
        });

        c.add(p + "/limit_bytes below required_bytes fails with INVALID_ARGUMENT or OUT_OF_RANGE", create, ctx -> {
            long size = ctx.volumeSize();
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("inverted"))
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(size).setLimitBytes(size / 2)).build();
            failsWithOneOf("CreateVolume: a capacity_range that cannot be honored (limit_bytes < required_bytes) MUST fail with OUT_OF_RANGE or INVALID_ARGUMENT",
                    () -> tryCreate(ctx, request), Status.Code.INVALID_ARGUMENT, Status.Code.OUT_OF_RANGE);
        });

        c.add(p + "/a negative limit_bytes fails with INVALID_ARGUMENT or OUT_OF_RANGE", create, ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("negative"))
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(ctx.volumeSize()).setLimitBytes(-1)).build();
            failsWithOneOf("CapacityRange.limit_bytes MUST NOT be negative; an invalid field MUST fail with INVALID_ARGUMENT (or OUT_OF_RANGE, unsupported capacity_range)",
                    () -> tryCreate(ctx, request), Status.Code.INVALID_ARGUMENT, Status.Code.OUT_OF_RANGE);
        });

        c.add(p + "/required_bytes equal to limit_bytes gives a volume of exactly that size, or fails with OUT_OF_RANGE", create, ctx -> {
            long size = ctx.volumeSize();
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("exact"))
                    .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(size).setLimitBytes(size)).build();
            var answer = new AtomicReference<Volume>();
            Status.Code got = Verdicts.okOr("CreateVolume: a capacity_range MUST always be honored; one the plugin cannot honor MUST fail with OUT_OF_RANGE",
                    () -> answer.getAndSet(tryCreate(ctx, request).getVolume()), Status.Code.OUT_OF_RANGE);
            if (got != Status.Code.OK) return;
            long capacity = answer.get().getCapacityBytes();
            check(capacity == 0 || capacity == size,
                    "CapacityRange: required_bytes = limit_bytes asks for an exact size, and capacity_range MUST always be honored",
                    () -> "capacity_bytes " + capacity + " for exactly " + size);
        });

        c.add(p + "/a volume asked for with several access modes supports all of them, or creation fails with INVALID_ARGUMENT", create, ctx -> {
            List<VolumeCapability> asked = List.of(ctx.capability(), ctx.capability(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER));
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("modes")).clearVolumeCapabilities().addAllVolumeCapabilities(asked).build();
            var answer = new AtomicReference<Volume>();
            Status.Code got = Verdicts.okOr("CreateVolume: if ANY of the volume_capabilities is not supported the call MUST fail (unsupported field: INVALID_ARGUMENT)",
                    () -> answer.getAndSet(tryCreate(ctx, request).getVolume()), Status.Code.INVALID_ARGUMENT);
            if (got != Status.Code.OK) return;
            Volume v = answer.get();
            ValidateVolumeCapabilitiesResponse validated = ok("ValidateVolumeCapabilities MUST succeed for an existing volume",
                    () -> ctx.controller().validateVolumeCapabilities(validateRequest(ctx, v).clearVolumeCapabilities().addAllVolumeCapabilities(asked).build()));
            check(validated.hasConfirmed() && asked.stream().allMatch(a -> validated.getConfirmed().getVolumeCapabilitiesList().stream().anyMatch(x -> sameKind(x, a))),
                    "CreateVolume: the SP MUST provision a volume that satisfies ALL of the capabilities (the CO MAY use it with ANY of them)",
                    () -> "ValidateVolumeCapabilities answered " + Verdicts.oneLine(validated));
        });

        c.add(p + "/parameters larger than 4 KiB fail with INVALID_ARGUMENT", create, ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("big-params"))
                    .putParameters("csi4j.io/sanity-padding", "x".repeat(Limits.MAP + 1)).build();
            fails(Status.Code.INVALID_ARGUMENT,
                    "Size limits: a map<string, string> SHALL NOT exceed 4 KiB; an invalid field MUST fail with INVALID_ARGUMENT",
                    () -> tryCreate(ctx, request));
        });

        c.add(p + "/a secret key with characters other than alphanumerics, '-', '_' and '.' fails with INVALID_ARGUMENT", create, ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("bad-secret")).putSecrets("csi4j sanity/key!", "value").build();
            fails(Status.Code.INVALID_ARGUMENT,
                    "Secrets: each key MUST consist of alphanumeric characters, '-', '_' or '.'; an invalid field MUST fail with INVALID_ARGUMENT",
                    () -> tryCreate(ctx, request));
        });

        c.add(p + "/an error message does not contain a secret value", create.and(Requirement.custom("secrets to pass (--secrets)",
                (caps, k) -> !k.secrets().isEmpty())), ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("bad") + "\u0007").build();
            fails(Status.Code.INVALID_ARGUMENT, "CreateVolume.name: a control character is an invalid field (INVALID_ARGUMENT)", () -> {
                try {
                    return tryCreate(ctx, request);
                } catch (StatusRuntimeException e) {
                    String message = String.valueOf(e.getStatus().getDescription());
                    for (String secret : ctx.secrets().values()) {
                        check(secret.isEmpty() || !message.contains(secret),
                                "csi_secret: a secret field MUST be treated as sensitive (not logged, not in a status message the CO may show to users)",
                                () -> "the status message carries the value of a secret");
                    }
                    throw e;
                }
            });
        });

        Requirement topology = create.and(Requirement.custom("plugin capability VOLUME_ACCESSIBILITY_CONSTRAINTS",
                (caps, k) -> caps.has(PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS)));
        c.add(p + "/with this node's topology as requisite creates a volume accessible from it", topology, ctx -> {
            io.csi4j.proto.csi.Topology node = nodeTopology(ctx);
            Volume v = ctx.createVolume(ctx.volumeRequest(ctx.name("topology"))
                    .setAccessibilityRequirements(io.csi4j.proto.csi.TopologyRequirement.newBuilder().addRequisite(node).addPreferred(node)).build());
            var prefixes = Topologies.verify(v.getAccessibleTopologyList(), "Volume.accessible_topology");
            prefixes.addAll(Topologies.verify(List.of(node), "NodeGetInfoResponse.accessible_topology"));
            check(prefixes.size() <= 1, "Topology: a key prefix MUST be identical across all topology keys returned by the SP (across all RPCs)",
                    () -> "prefixes " + prefixes);
            check(v.getAccessibleTopologyCount() == 0 || v.getAccessibleTopologyList().contains(node),
                    "TopologyRequirement.requisite: with one requisite topology (x = n) the SP MUST make the volume available from it",
                    () -> "accessible_topology " + v.getAccessibleTopologyList().stream().map(Verdicts::oneLine).toList() + " for requisite " + Verdicts.oneLine(node));
        });

        c.add(p + "/with a requisite topology the plugin cannot serve fails with RESOURCE_EXHAUSTED", topology, ctx -> {
            io.csi4j.proto.csi.Topology node = nodeTopology(ctx);
            var elsewhere = io.csi4j.proto.csi.Topology.newBuilder();
            String suffix = ctx.name("nowhere").replaceAll("[^a-zA-Z0-9]", "");
            node.getSegmentsMap().forEach((key, value) -> elsewhere.putSegments(key, "n" + suffix.substring(Math.max(0, suffix.length() - 40))));
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("nowhere"))
                    .setAccessibilityRequirements(io.csi4j.proto.csi.TopologyRequirement.newBuilder().addRequisite(elsewhere)).build();
            failsWithOneOf("CreateVolume: a volume that cannot be made accessible from the requisite topologies MUST fail"
                            + " (RESOURCE_EXHAUSTED: unable to provision in accessible_topology; INVALID_ARGUMENT for a segment the plugin does not know)",
                    () -> tryCreate(ctx, request), Status.Code.RESOURCE_EXHAUSTED, Status.Code.INVALID_ARGUMENT);
        });

        c.add(p + "/from a snapshot that does not exist fails with NOT_FOUND", Requirement.controller(CREATE_DELETE_VOLUME, CREATE_DELETE_SNAPSHOT), ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("from-missing"))
                    .setVolumeContentSource(VolumeContentSource.newBuilder()
                            .setSnapshot(VolumeContentSource.SnapshotSource.newBuilder().setSnapshotId(ctx.name("no-such-snapshot"))))
                    .build();
            fails(Status.Code.NOT_FOUND, "CreateVolume: a source that does not exist MUST fail with NOT_FOUND", () -> tryCreate(ctx, request));
        });

        c.add(p + "/from a volume that does not exist fails with NOT_FOUND", Requirement.controller(CREATE_DELETE_VOLUME, CLONE_VOLUME), ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("clone-missing"))
                    .setVolumeContentSource(VolumeContentSource.newBuilder()
                            .setVolume(VolumeContentSource.VolumeSource.newBuilder().setVolumeId(ctx.name("no-such-volume"))))
                    .build();
            fails(Status.Code.NOT_FOUND, "CreateVolume: a source that does not exist MUST fail with NOT_FOUND", () -> tryCreate(ctx, request));
        });

        c.missing(p, "volume_content_source.type", create, ctx -> () -> tryCreate(ctx, ctx.volumeRequest(ctx.name("typeless"))
                .setVolumeContentSource(VolumeContentSource.getDefaultInstance()).build()));
        c.missing(p, "volume_content_source.snapshot.snapshot_id", Requirement.controller(CREATE_DELETE_VOLUME, CREATE_DELETE_SNAPSHOT),
                ctx -> () -> tryCreate(ctx, ctx.volumeRequest(ctx.name("no-snapshot-id")).setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setSnapshot(VolumeContentSource.SnapshotSource.getDefaultInstance())).build()));
        c.missing(p, "volume_content_source.volume.volume_id", Requirement.controller(CREATE_DELETE_VOLUME, CLONE_VOLUME),
                ctx -> () -> tryCreate(ctx, ctx.volumeRequest(ctx.name("no-volume-id")).setVolumeContentSource(VolumeContentSource.newBuilder()
                        .setVolume(VolumeContentSource.VolumeSource.getDefaultInstance())).build()));
    }

    /** This node's topology from NodeGetInfo; not applicable when it reports none. */
    static io.csi4j.proto.csi.Topology nodeTopology(TestContext ctx) {
        var info = ok("NodeGetInfo MUST succeed", () -> ctx.node().nodeGetInfo(NodeGetInfoRequest.getDefaultInstance()));
        if (!info.hasAccessibleTopology() || info.getAccessibleTopology().getSegmentsCount() == 0) {
            TestContext.notApplicable("NodeGetInfo reports no accessible_topology to ask for");
        }
        return info.getAccessibleTopology();
    }

    /**
     * A capability this volume does not support, by the plugin's own account: the other access type,
     * unless ValidateVolumeCapabilities confirms that too (then the test is not applicable).
     */
    static VolumeCapability unsupportedCapability(TestContext ctx, Volume v) {
        VolumeCapability other = ctx.otherAccessType();
        Status.Code got = Verdicts.okOr("ValidateVolumeCapabilities MUST succeed for an existing volume (or refuse an unsupported capability)", () -> {
            if (ctx.controller().validateVolumeCapabilities(validateRequest(ctx, v).clearVolumeCapabilities().addVolumeCapabilities(other).build()).hasConfirmed()) {
                TestContext.notApplicable("the volume supports the other access type too (ValidateVolumeCapabilities confirms it)");
            }
            return null;
        }, Status.Code.INVALID_ARGUMENT);
        return other;
    }

    private static void deleteVolume(Catalog c) {
        Requirement create = Requirement.controller(CREATE_DELETE_VOLUME);
        String p = CONTROLLER + "DeleteVolume";

        c.add(p + "/deletes a volume and repeated calls answer OK", create, ctx -> {
            Volume v = ctx.createVolume("delete");
            for (int i = 0; i < ctx.repeats(); i++) {
                int attempt = i;
                ok(attempt == 0 ? "DeleteVolume MUST succeed for an existing volume"
                                : "DeleteVolume MUST be idempotent: a volume that no longer exists MUST reply OK",
                        () -> ctx.controller().deleteVolume(delete(ctx, v.getVolumeId())));
                if (attempt == 0) ctx.forgetVolume(v.getVolumeId());
            }
            if (ctx.caps().has(GET_VOLUME)) {
                fails(Status.Code.NOT_FOUND, "ControllerGetVolume of a deleted volume MUST fail with NOT_FOUND",
                        () -> ctx.controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build()));
            }
            if (ctx.caps().has(LIST_VOLUMES)) {
                boolean listed = Listing.volumes(ctx).stream().anyMatch(e -> e.getVolume().getVolumeId().equals(v.getVolumeId()));
                check(!listed, "ListVolumes SHALL return the volumes the plugin knows about: a deleted volume is not one", () -> "the deleted volume is still listed");
            }
        });

        c.add(p + "/a volume that does not exist answers OK", create, ctx ->
                ok("DeleteVolume MUST reply OK for a volume that does not exist",
                        () -> ctx.controller().deleteVolume(delete(ctx, ctx.name("no-such-volume")))));

        c.missing(p, "volume_id", create, ctx -> () -> ctx.controller().deleteVolume(delete(ctx, "")));
    }

    static ValidateVolumeCapabilitiesRequest.Builder validateRequest(TestContext ctx, Volume v) {
        return ValidateVolumeCapabilitiesRequest.newBuilder()
                .setVolumeId(v.getVolumeId())
                .putAllVolumeContext(v.getVolumeContextMap())
                .addVolumeCapabilities(ctx.capability())
                .putAllParameters(ctx.config().params())
                .putAllSecrets(ctx.secrets());
    }

    private static void validate(Catalog c) {
        Requirement create = Requirement.controller(CREATE_DELETE_VOLUME);
        String p = CONTROLLER + "ValidateVolumeCapabilities";

        c.add(p + "/confirms the capability a volume was created with", create, ctx -> {
            Volume v = ctx.createVolume("validate");
            ValidateVolumeCapabilitiesResponse answer = ok("ValidateVolumeCapabilities: a Controller Plugin MUST implement this RPC",
                    () -> ctx.controller().validateVolumeCapabilities(validateRequest(ctx, v).build()));
            for (int i = 1; i < ctx.repeats(); i++) {
                ValidateVolumeCapabilitiesResponse again = ok("ValidateVolumeCapabilities MUST be idempotent",
                        () -> ctx.controller().validateVolumeCapabilities(validateRequest(ctx, v).build()));
                check(again.equals(answer), "ValidateVolumeCapabilities MUST be idempotent: the same request, the same answer",
                        () -> Verdicts.oneLine(again) + " after " + Verdicts.oneLine(answer));
            }
            check(answer.hasConfirmed(),
                    "CreateVolume: the SP MUST provision a volume that satisfies ALL requested capabilities, so ValidateVolumeCapabilities confirms them",
                    () -> "no confirmed (message: '" + answer.getMessage() + "')");
            VolumeCapability asked = ctx.capability();
            check(answer.getConfirmed().getVolumeCapabilitiesList().stream().anyMatch(confirmed -> sameKind(confirmed, asked)),
                    "ValidateVolumeCapabilitiesResponse.Confirmed.volume_capabilities (REQUIRED) holds the capabilities validated",
                    () -> Verdicts.oneLine(answer.getConfirmed()));
        });

        c.add(p + "/confirms all the capabilities asked for or none of them", create, ctx -> {
            Volume v = ctx.createVolume("validate");
            List<VolumeCapability> asked = List.of(ctx.capability(), ctx.otherAccessType());
            var answer = new AtomicReference<ValidateVolumeCapabilitiesResponse>();
            Status.Code got = Verdicts.okOr("ValidateVolumeCapabilities MUST succeed for an existing volume (or refuse an unsupported capability with INVALID_ARGUMENT)",
                    () -> answer.getAndSet(ctx.controller().validateVolumeCapabilities(
                            validateRequest(ctx, v).clearVolumeCapabilities().addAllVolumeCapabilities(asked).build())), Status.Code.INVALID_ARGUMENT);
            if (got != Status.Code.OK || !answer.get().hasConfirmed()) return;
            var confirmed = answer.get().getConfirmed().getVolumeCapabilitiesList();
            check(asked.stream().allMatch(a -> confirmed.stream().anyMatch(x -> sameKind(x, a))),
                    "ValidateVolumeCapabilities SHALL return confirmed only if ALL the volume capabilities specified are supported",
                    () -> "confirmed " + Verdicts.oneLine(answer.get().getConfirmed()) + " for a mount and a block capability");
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", Requirement.controllerService(), ctx -> {
            var request = ValidateVolumeCapabilitiesRequest.newBuilder().setVolumeId(ctx.name("no-such-volume"))
                    .addVolumeCapabilities(ctx.capability()).putAllSecrets(ctx.secrets()).build();
            fails(Status.Code.NOT_FOUND, "ValidateVolumeCapabilities: a volume that does not exist MUST fail with NOT_FOUND",
                    () -> ctx.controller().validateVolumeCapabilities(request));
        });

        c.missing(p, "volume_id", Requirement.controllerService(), ctx -> () -> ctx.controller().validateVolumeCapabilities(
                ValidateVolumeCapabilitiesRequest.newBuilder().addVolumeCapabilities(ctx.capability()).putAllSecrets(ctx.secrets()).build()));
        c.missing(p, "volume_capabilities", create, ctx -> {
            Volume v = ctx.createVolume("validate");
            return () -> ctx.controller().validateVolumeCapabilities(validateRequest(ctx, v).clearVolumeCapabilities().build());
        });
    }

    /** Same access mode and access type (and fs_type when one was asked for): what a CO compares a confirmation with. */
    static boolean sameKind(VolumeCapability confirmed, VolumeCapability asked) {
        if (confirmed.getAccessMode().getMode() != asked.getAccessMode().getMode()) return false;
        if (confirmed.getAccessTypeCase() != asked.getAccessTypeCase()) return false;
        return !asked.hasMount() || asked.getMount().getFsType().isEmpty() || asked.getMount().getFsType().equals(confirmed.getMount().getFsType());
    }

    private static void getVolume(Catalog c) {
        Requirement get = Requirement.controller(CREATE_DELETE_VOLUME, GET_VOLUME);
        String p = CONTROLLER + "ControllerGetVolume";

        c.add(p + "/returns the volume and its status", get, ctx -> {
            Volume v = ctx.createVolume("get");
            boolean published = ctx.caps().has(LIST_VOLUMES_PUBLISHED_NODES) && ctx.caps().has(PUBLISH_UNPUBLISH_VOLUME);
            if (published) PublishTests.controllerPublish(ctx, v);
            ControllerGetVolumeResponse answer = ok("ControllerGetVolume MUST succeed for an existing volume (GET_VOLUME)",
                    () -> ctx.controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(v.getVolumeId()).build()));
            check(answer.getVolume().getVolumeId().equals(v.getVolumeId()), "ControllerGetVolumeResponse.volume (REQUIRED) is the volume asked for",
                    () -> "volume_id " + answer.getVolume().getVolumeId());
            check(answer.hasStatus(), "ControllerGetVolumeResponse.status is REQUIRED", () -> "no status");
            check(answer.getVolume().getCapacityBytes() == v.getCapacityBytes(), "ControllerGetVolume returns the current information of the volume",
                    () -> "capacity_bytes " + answer.getVolume().getCapacityBytes() + ", created with " + v.getCapacityBytes());
            if (published) {
                check(answer.getStatus().getPublishedNodeIdsList().contains(ctx.nodeId()),
                        "ControllerGetVolumeResponse.status.published_node_ids MUST be specified with LIST_VOLUMES_PUBLISHED_NODES",
                        () -> "published_node_ids " + answer.getStatus().getPublishedNodeIdsList() + " without " + ctx.nodeId());
            }
            if (ctx.caps().has(VOLUME_CONDITION)) {
                check(answer.getStatus().hasVolumeCondition(),
                        "ControllerGetVolume: a Controller Plugin MUST provide a non-empty volume_condition if it has VOLUME_CONDITION",
                        () -> "no volume_condition");
                check(!answer.getStatus().getVolumeCondition().getMessage().isEmpty(), "VolumeCondition.message is REQUIRED",
                        () -> "an empty message");
            }
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", Requirement.controller(GET_VOLUME), ctx ->
                fails(Status.Code.NOT_FOUND, "ControllerGetVolume: a volume that does not exist MUST fail with NOT_FOUND",
                        () -> ctx.controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(ctx.name("no-such-volume")).build())));

        c.missing(p, "volume_id", Requirement.controller(GET_VOLUME),
                ctx -> () -> ctx.controller().controllerGetVolume(ControllerGetVolumeRequest.getDefaultInstance()));
    }

    private static void listVolumes(Catalog c) {
        String p = CONTROLLER + "ListVolumes";
        c.add(p + "/lists a new volume with its capacity", Requirement.controller(CREATE_DELETE_VOLUME, LIST_VOLUMES), ctx -> {
            Volume v = ctx.createVolume("listed");
            List<ListVolumesResponse.Entry> all = Listing.volumes(ctx);
            Optional<ListVolumesResponse.Entry> entry = all.stream().filter(e -> e.getVolume().getVolumeId().equals(v.getVolumeId())).findFirst();
            check(entry.isPresent(), "ListVolumes SHALL return the information about all the volumes that it knows about",
                    () -> "a new volume " + v.getVolumeId() + " is missing from " + all.size() + " entries");
            check(entry.get().getVolume().getCapacityBytes() == v.getCapacityBytes(), "ListVolumes returns each volume's information",
                    () -> "capacity_bytes " + entry.get().getVolume().getCapacityBytes() + ", created with " + v.getCapacityBytes());
            if (ctx.caps().has(VOLUME_CONDITION)) {
                check(entry.get().getStatus().hasVolumeCondition() && !entry.get().getStatus().getVolumeCondition().getMessage().isEmpty(),
                        "ListVolumesResponse.VolumeStatus.volume_condition MUST be specified if the VOLUME_CONDITION controller capability is supported (its message is REQUIRED)",
                        () -> "status " + Verdicts.oneLine(entry.get().getStatus()));
            }
        });

        c.add(p + "/reports the node a volume is published on", Requirement.controller(CREATE_DELETE_VOLUME, LIST_VOLUMES, LIST_VOLUMES_PUBLISHED_NODES, PUBLISH_UNPUBLISH_VOLUME), ctx -> {
            Volume v = ctx.createVolume("listed");
            PublishTests.controllerPublish(ctx, v);
            var entry = Listing.volumes(ctx).stream().filter(e -> e.getVolume().getVolumeId().equals(v.getVolumeId())).findFirst();
            check(entry.isPresent(), "ListVolumes SHALL return the information about all the volumes that it knows about", () -> "the published volume is not listed");
            check(entry.get().hasStatus() && entry.get().getStatus().getPublishedNodeIdsList().contains(ctx.nodeId()),
                    "ListVolumesResponse.Entry.status MUST be specified with LIST_VOLUMES_PUBLISHED_NODES, naming the nodes the volume is published on",
                    () -> "status " + Verdicts.oneLine(entry.get().getStatus()));
        });
    }

    private static void capacity(Catalog c) {
        String p = CONTROLLER + "GetCapacity";
        Requirement capacity = Requirement.controller(GET_CAPACITY);
        c.add(p + "/reports a non-negative available capacity", capacity, ctx -> {
            GetCapacityResponse all = ok("GetCapacity MUST succeed (GET_CAPACITY)", () -> ctx.controller().getCapacity(GetCapacityRequest.getDefaultInstance()));
            checkCapacity(all);
            GetCapacityResponse specific = ok("GetCapacity MUST succeed for the capabilities and parameters CreateVolume is called with",
                    () -> ctx.controller().getCapacity(GetCapacityRequest.newBuilder()
                            .addVolumeCapabilities(ctx.capability()).putAllParameters(ctx.config().params()).build()));
            checkCapacity(specific);
        });
    }

    private static void checkCapacity(GetCapacityResponse answer) {
        check(answer.getAvailableCapacity() >= 0, "GetCapacityResponse.available_capacity MUST NOT be negative", () -> Long.toString(answer.getAvailableCapacity()));
        check(!answer.hasMaximumVolumeSize() || answer.getMaximumVolumeSize().getValue() >= 0,
                "GetCapacityResponse.maximum_volume_size MUST NOT be negative", () -> Long.toString(answer.getMaximumVolumeSize().getValue()));
        check(!answer.hasMinimumVolumeSize() || answer.getMinimumVolumeSize().getValue() >= 0,
                "GetCapacityResponse.minimum_volume_size MUST NOT be negative", () -> Long.toString(answer.getMinimumVolumeSize().getValue()));
    }

    static ControllerExpandVolumeRequest.Builder expandRequest(TestContext ctx, String volumeId, long bytes) {
        return ControllerExpandVolumeRequest.newBuilder()
                .setVolumeId(volumeId)
                .setCapacityRange(TestContext.required(bytes))
                .setVolumeCapability(ctx.capability())
                .putAllSecrets(ctx.secrets());
    }

    private static void expand(Catalog c) {
        Requirement expand = Requirement.controller(CREATE_DELETE_VOLUME, EXPAND_VOLUME);
        String p = CONTROLLER + "ControllerExpandVolume";

        c.add(p + "/grows a volume and repeated calls answer OK", expand, ctx -> {
            Volume v = ctx.createVolume("expand");
            long bigger = 2 * ctx.volumeSize();
            for (int i = 0; i < ctx.repeats(); i++) {
                int attempt = i;
                ControllerExpandVolumeResponse answer = ok(attempt == 0 ? "ControllerExpandVolume MUST succeed for an existing volume (EXPAND_VOLUME)"
                                : "ControllerExpandVolume MUST be idempotent: a volume already at least as large SHOULD reply OK",
                        () -> ctx.controller().controllerExpandVolume(expandRequest(ctx, v.getVolumeId(), bigger).build()));
                check(answer.getCapacityBytes() >= bigger, "ControllerExpandVolumeResponse.capacity_bytes (REQUIRED) is the capacity after expansion",
                        () -> answer.getCapacityBytes() + " < requested " + bigger);
            }
        });

        c.add(p + "/a volume_capability the volume does not support fails with INVALID_ARGUMENT", expand, ctx -> {
            Volume v = ctx.createVolume("expand");
            VolumeCapability other = unsupportedCapability(ctx, v);
            fails(Status.Code.INVALID_ARGUMENT, "ControllerExpandVolume: capabilities not supported by the volume MUST fail with INVALID_ARGUMENT (exceeds capabilities)",
                    () -> ctx.controller().controllerExpandVolume(expandRequest(ctx, v.getVolumeId(), 2 * ctx.volumeSize()).setVolumeCapability(other).build()));
        });

        c.add(p + "/limit_bytes below the volume's size fails with OUT_OF_RANGE", expand, ctx -> {
            Volume v = ctx.createVolume("expand");
            long below = v.getCapacityBytes() > 0 ? v.getCapacityBytes() / 2 : ctx.volumeSize() / 2;
            fails(Status.Code.OUT_OF_RANGE, "ControllerExpandVolume: a capacity_range the plugin cannot honor (a volume larger than limit_bytes) MUST fail with OUT_OF_RANGE",
                    () -> ctx.controller().controllerExpandVolume(expandRequest(ctx, v.getVolumeId(), below)
                            .setCapacityRange(CapacityRange.newBuilder().setRequiredBytes(below).setLimitBytes(below)).build()));
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", Requirement.controller(EXPAND_VOLUME), ctx ->
                fails(Status.Code.NOT_FOUND, "ControllerExpandVolume: a volume that does not exist MUST fail with NOT_FOUND",
                        () -> ctx.controller().controllerExpandVolume(expandRequest(ctx, ctx.name("no-such-volume"), 2 * ctx.volumeSize()).build())));

        c.missing(p, "volume_id", Requirement.controller(EXPAND_VOLUME),
                ctx -> () -> ctx.controller().controllerExpandVolume(expandRequest(ctx, "", 2 * ctx.volumeSize()).build()));
        c.missing(p, "capacity_range", expand, ctx -> {
            Volume v = ctx.createVolume("expand");
            return () -> ctx.controller().controllerExpandVolume(expandRequest(ctx, v.getVolumeId(), 1).clearCapacityRange().build());
        });
    }

    static Map<String, String> mutableOrDummy(TestContext ctx) {
        return ctx.config().mutableParams().isEmpty() ? Map.of("csi4j.io/sanity", "probe") : ctx.config().mutableParams();
    }

    private static void modify(Catalog c) {
        Requirement modify = Requirement.controller(CREATE_DELETE_VOLUME, MODIFY_VOLUME);
        String p = CONTROLLER + "ControllerModifyVolume";

        c.add(p + "/applies mutable parameters and repeated calls answer OK", modify.and(Requirement.mutableParams()), ctx -> {
            Volume v = ctx.createVolume("modify");
            for (int i = 0; i < ctx.repeats(); i++) {
                ok("ControllerModifyVolume MUST succeed for valid mutable parameters and MUST be idempotent",
                        () -> ctx.controller().controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(v.getVolumeId())
                                .putAllMutableParameters(ctx.config().mutableParams()).putAllSecrets(ctx.secrets()).build()));
            }
        });

        c.add(p + "/unsupported mutable parameters fail with INVALID_ARGUMENT", modify, ctx -> {
            Volume v = ctx.createVolume("modify");
            fails(Status.Code.INVALID_ARGUMENT, "ControllerModifyVolume: mutable parameter keys or values the plugin does not support MUST fail with INVALID_ARGUMENT",
                    () -> ctx.controller().controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(v.getVolumeId())
                            .putMutableParameters("csi4j.io/sanity-unsupported-" + ctx.name("key").hashCode(), "?").putAllSecrets(ctx.secrets()).build()));
        });

        c.add(p + "/a volume that does not exist fails with NOT_FOUND", Requirement.controller(MODIFY_VOLUME), ctx -> {
            var request = ControllerModifyVolumeRequest.newBuilder().setVolumeId(ctx.name("no-such-volume"))
                    .putAllMutableParameters(mutableOrDummy(ctx)).putAllSecrets(ctx.secrets()).build();
            if (ctx.config().mutableParams().isEmpty()) {
                failsWithOneOf("ControllerModifyVolume: a volume that does not exist MUST fail with NOT_FOUND (INVALID_ARGUMENT for the unknown probe parameter)",
                        () -> ctx.controller().controllerModifyVolume(request), Status.Code.NOT_FOUND, Status.Code.INVALID_ARGUMENT);
            } else {
                fails(Status.Code.NOT_FOUND, "ControllerModifyVolume: a volume that does not exist MUST fail with NOT_FOUND",
                        () -> ctx.controller().controllerModifyVolume(request));
            }
        });

        c.missing(p, "volume_id", Requirement.controller(MODIFY_VOLUME), ctx -> () -> ctx.controller().controllerModifyVolume(
                ControllerModifyVolumeRequest.newBuilder().putAllMutableParameters(mutableOrDummy(ctx)).putAllSecrets(ctx.secrets()).build()));
        // mutable_parameters is REQUIRED, but proto3 sends an empty map as absent: it binds the CO, and a modify that
        // names no key changes nothing ("only keys that are specified should result in modifications"; csi-sanity sends these)
        String emptyIsNoChange = " (an empty mutable_parameters cannot be told from an absent one in proto3: its REQUIRED binds the CO";
        c.add(p + "/empty mutable_parameters for a volume that does not exist fail with NOT_FOUND", Requirement.controller(MODIFY_VOLUME), ctx ->
                fails(Status.Code.NOT_FOUND, "ControllerModifyVolume: a volume that does not exist MUST fail with NOT_FOUND" + emptyIsNoChange + ")",
                        () -> ctx.controller().controllerModifyVolume(emptyModify(ctx, ctx.name("no-such-volume")))));
        c.add(p + "/empty mutable_parameters answer OK", modify, ctx -> {
            Volume v = ctx.createVolume("modify");
            ok("ControllerModifyVolume: SPs MUST NOT modify volumes based on the absence of keys" + emptyIsNoChange
                    + "; a request naming no key asks for no change)", () -> ctx.controller().controllerModifyVolume(emptyModify(ctx, v.getVolumeId())));
        });
        c.add(p + "/empty mutable_parameters answer OK for a volume created with mutable parameters", modify.and(Requirement.mutableParams()), ctx -> {
            Volume v = ctx.createVolume(ctx.volumeRequest(ctx.name("modify")).putAllMutableParameters(ctx.config().mutableParams()).build());
            ok("ControllerModifyVolume: SPs MUST NOT modify volumes based on the absence of keys" + emptyIsNoChange
                    + "; a request naming no key asks for no change)", () -> ctx.controller().controllerModifyVolume(emptyModify(ctx, v.getVolumeId())));
        });
    }

    private static ControllerModifyVolumeRequest emptyModify(TestContext ctx, String volumeId) {
        return ControllerModifyVolumeRequest.newBuilder().setVolumeId(volumeId).putAllSecrets(ctx.secrets()).build();
    }
}
