package io.csi4j.testkit.suite;

import static io.csi4j.testkit.suite.Verdicts.check;
import static io.csi4j.testkit.suite.Verdicts.fails;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.csi.ControllerServiceCapability;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.GetPluginCapabilitiesRequest;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.GetPluginInfoResponse;
import io.csi4j.proto.csi.NodeServiceCapability;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.ProbeRequest;
import io.csi4j.proto.csi.ProbeResponse;
import io.grpc.Status;
import java.util.List;
import java.util.regex.Pattern;

/** The Identity service: REQUIRED of every plugin. */
final class IdentityTests {
    private IdentityTests() {}

    /** RFC 1035-style: at most 63 characters, alphanumeric at both ends, dashes, dots and alphanumerics between. */
    private static final Pattern PLUGIN_NAME = Pattern.compile("[a-zA-Z0-9]([-.a-zA-Z0-9]{0,61}[a-zA-Z0-9])?");

    static List<SanityTest> tests() {
        Catalog c = new Catalog();

        c.add("Identity/GetPluginInfo/returns a valid name and a vendor_version", Requirement.NONE, ctx -> {
            GetPluginInfoResponse info = ok("GetPluginInfo MUST succeed", () -> ctx.identity().getPluginInfo(GetPluginInfoRequest.getDefaultInstance()));
            check(!info.getName().isEmpty(), "GetPluginInfoResponse.name is REQUIRED", () -> "an empty name");
            check(PLUGIN_NAME.matcher(info.getName()).matches(),
                    "GetPluginInfoResponse.name MUST be 63 characters or less, begin and end with an alphanumeric character, with dashes, dots and alphanumerics between",
                    () -> "'" + info.getName() + "'");
            check(!info.getVendorVersion().isEmpty(), "GetPluginInfoResponse.vendor_version is REQUIRED", () -> "an empty vendor_version");
        });

        c.add("Identity/GetPluginCapabilities/returns only known capabilities", Requirement.NONE, ctx -> {
            var answer = ok("GetPluginCapabilities MUST succeed",
                    () -> ctx.identity().getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance()));
            for (PluginCapability cap : answer.getCapabilitiesList()) {
                check(cap.getTypeCase() != PluginCapability.TypeCase.TYPE_NOT_SET,
                        "PluginCapability: one of the type fields is set", () -> "a capability without a type");
                boolean known = switch (cap.getTypeCase()) {
                    case SERVICE -> cap.getService().getType() != PluginCapability.Service.Type.UNKNOWN
                            && cap.getService().getType() != PluginCapability.Service.Type.UNRECOGNIZED;
                    case VOLUME_EXPANSION -> cap.getVolumeExpansion().getType() != PluginCapability.VolumeExpansion.Type.UNKNOWN
                            && cap.getVolumeExpansion().getType() != PluginCapability.VolumeExpansion.Type.UNRECOGNIZED;
                    default -> true;
                };
                check(known, "GetPluginCapabilities reports capabilities the spec defines", () -> Verdicts.oneLine(cap));
            }
        });

        c.add("Identity/GetPluginCapabilities/volume expansion comes with an EXPAND_VOLUME capability",
                Requirement.custom("plugin capability VolumeExpansion ONLINE or OFFLINE", (caps, k) -> !caps.expansion().isEmpty()), ctx -> {
                    var caps = ctx.caps();
                    boolean controller = caps.has(ControllerServiceCapability.RPC.Type.EXPAND_VOLUME);
                    boolean node = caps.has(NodeServiceCapability.RPC.Type.EXPAND_VOLUME);
                    if (caps.has(PluginCapability.VolumeExpansion.Type.ONLINE)) {
                        check(controller || node,
                                "VolumeExpansion ONLINE: the Plugin MUST implement either the EXPAND_VOLUME controller capability or the EXPAND_VOLUME node capability or both",
                                () -> "neither is advertised");
                    }
                    if (caps.has(PluginCapability.VolumeExpansion.Type.OFFLINE)) {
                        check(controller,
                                "VolumeExpansion OFFLINE: the Plugin MUST implement either the EXPAND_VOLUME controller capability or both the controller and node EXPAND_VOLUME capabilities",
                                () -> "no controller EXPAND_VOLUME");
                    }
                });

        c.add("Identity/Probe/succeeds", Requirement.NONE, ctx -> {
            ProbeResponse answer = ok("Probe MUST succeed for a healthy plugin", () -> ctx.identity().probe(ProbeRequest.getDefaultInstance()));
            check(!answer.hasReady() || answer.getReady().getValue(),
                    "Probe: a plugin that finished initializing answers ready=true (or leaves ready unset)",
                    () -> "ready=false after the suite waited for readiness");
        });

        c.add("Identity/Probe/is idempotent", Requirement.NONE, ctx -> {
            for (int i = 0; i < ctx.repeats(); i++) {
                ok("Probe MAY be invoked at any time and multiple times", () -> ctx.identity().probe(ProbeRequest.getDefaultInstance()));
            }
        });

        Requirement noMetadata = Requirement.custom("no plugin capability SNAPSHOT_METADATA_SERVICE",
                (caps, k) -> !caps.has(PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE));
        c.add("SnapshotMetadata/GetMetadataAllocated/without SNAPSHOT_METADATA_SERVICE fails with UNIMPLEMENTED", noMetadata, ctx ->
                fails(Status.Code.UNIMPLEMENTED, "Error scheme: an RPC the plugin does not implement MUST fail with UNIMPLEMENTED", () ->
                        ctx.snapshotMetadata().getMetadataAllocated(GetMetadataAllocatedRequest.newBuilder()
                                .setSnapshotId(ctx.name("no-such-snapshot")).build()).hasNext()));
        c.add("SnapshotMetadata/GetMetadataDelta/without SNAPSHOT_METADATA_SERVICE fails with UNIMPLEMENTED", noMetadata, ctx ->
                fails(Status.Code.UNIMPLEMENTED, "Error scheme: an RPC the plugin does not implement MUST fail with UNIMPLEMENTED", () ->
                        ctx.snapshotMetadata().getMetadataDelta(GetMetadataDeltaRequest.newBuilder()
                                .setBaseSnapshotId(ctx.name("no-such-snapshot")).setTargetSnapshotId(ctx.name("no-such-snapshot")).build()).hasNext()));

        return c.tests();
    }
}
