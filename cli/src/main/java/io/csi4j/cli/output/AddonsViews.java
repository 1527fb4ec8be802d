package io.csi4j.cli.output;

import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import io.csi4j.proto.addons.identity.Capability;
import io.csi4j.proto.addons.identity.GetCapabilitiesResponse;
import io.csi4j.proto.addons.identity.GetIdentityResponse;
import io.csi4j.proto.addons.identity.ProbeResponse;
import io.csi4j.proto.addons.volumegroup.ControllerGetVolumeGroupResponse;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupResponse;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsResponse;
import io.csi4j.proto.addons.volumegroup.ModifyVolumeGroupMembershipResponse;
import io.csi4j.proto.addons.volumegroup.VolumeGroup;
import io.csi4j.proto.csi.Volume;

/** Table views of the CSI-Addons identity and volumegroup responses. */
final class AddonsViews {
    private AddonsViews() {}

    static View of(Message message) {
        return switch (message) {
            case GetIdentityResponse r -> View.fields().add("name", r.getName()).add("vendor version", r.getVendorVersion())
                    .add("manifest", Views.map(r.getManifestMap())).build();
            case GetCapabilitiesResponse r -> capabilities(r);
            case ProbeResponse r -> View.line("ready: " + (r.hasReady() ? r.getReady().getValue() : "true (not reported)"));
            case CreateVolumeGroupResponse r -> group(r.getVolumeGroup());
            case ModifyVolumeGroupMembershipResponse r -> group(r.getVolumeGroup());
            case ControllerGetVolumeGroupResponse r -> group(r.getVolumeGroup());
            case ListVolumeGroupsResponse r -> {
                var g = View.grid("VOLUME GROUP ID", "VOLUMES", "CONTEXT");
                for (var e : r.getEntriesList()) {
                    var vg = e.getVolumeGroup();
                    g.row(vg.getVolumeGroupId(), Views.join(vg.getVolumesList().stream().map(Volume::getVolumeId).toList()),
                            Views.map(vg.getVolumeGroupContextMap()));
                }
                yield Views.withToken(g.build("no volume groups"), r.getNextToken());
            }
            default -> View.line(message.getDescriptorForType().getName() + " " + TextFormat.printer().emittingSingleLine(true).printToString(message));
        };
    }

    private static View group(VolumeGroup vg) {
        var members = View.grid("MEMBER VOLUME", "CAPACITY");
        for (Volume v : vg.getVolumesList()) members.row(v.getVolumeId(), Views.bytes(v.getCapacityBytes()));
        return View.stack(View.fields().add("volume group id", vg.getVolumeGroupId())
                .add("context", Views.map(vg.getVolumeGroupContextMap())).build(), members.build("no member volumes"));
    }

    private static View capabilities(GetCapabilitiesResponse r) {
        var g = View.grid("KIND", "CAPABILITY");
        for (Capability c : r.getCapabilitiesList()) {
            String type = switch (c.getTypeCase()) {
                case SERVICE -> c.getService().getType().name();
                case RECLAIM_SPACE -> c.getReclaimSpace().getType().name();
                case NETWORK_FENCE -> c.getNetworkFence().getType().name();
                case VOLUME_REPLICATION -> c.getVolumeReplication().getType().name();
                case VOLUME_GROUP -> c.getVolumeGroup().getType().name();
                case ENCRYPTION_KEY_ROTATION -> c.getEncryptionKeyRotation().getType().name();
                case TYPE_NOT_SET -> "?";
            };
            g.row(c.getTypeCase().name().toLowerCase().replace('_', ' '), type);
        }
        return g.build("no capabilities");
    }
}
