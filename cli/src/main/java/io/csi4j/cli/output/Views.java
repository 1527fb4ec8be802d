package io.csi4j.cli.output;

import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import com.google.protobuf.Timestamp;
import io.csi4j.cli.ByteSize;
import io.csi4j.proto.csi.*;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.Locale;

/** The table view of each CSI response: what a person wants to see first, in the order they want it. */
public final class Views {
    private Views() {}

    public static View of(Message message) {
        return switch (message) {
            case GetPluginInfoResponse r -> View.fields().add("name", r.getName()).add("vendor version", r.getVendorVersion())
                    .add("manifest", map(r.getManifestMap())).build();
            case GetPluginCapabilitiesResponse r -> pluginCapabilities(r.getCapabilitiesList());
            case ProbeResponse r -> View.line("ready: " + (r.hasReady() ? r.getReady().getValue() : "true (not reported)"));
            case CreateVolumeResponse r -> volume(r.getVolume()).build();
            case ControllerGetVolumeResponse r -> volume(r.getVolume())
                    .add("published on", join(r.getStatus().getPublishedNodeIdsList()))
                    .add("condition", condition(r.getStatus().hasVolumeCondition(), r.getStatus().getVolumeCondition())).build();
            case ListVolumesResponse r -> withToken(volumes(r.getEntriesList()), r.getNextToken());
            case ControllerPublishVolumeResponse r -> View.fields().add("publish context", map(r.getPublishContextMap())).build();
            case ValidateVolumeCapabilitiesResponse r -> r.hasConfirmed()
                    ? View.fields().add("confirmed", "yes").add("capabilities",
                            r.getConfirmed().getVolumeCapabilitiesList().stream().map(Views::capability).collect(Collectors.joining("; ")))
                            .addIf("message", r.getMessage()).build()
                    : View.fields().add("confirmed", "no").add("message", r.getMessage().isEmpty() ? "-" : r.getMessage()).build();
            case GetCapacityResponse r -> View.fields().add("available", bytes(r.getAvailableCapacity()))
                    .add("maximum volume size", r.hasMaximumVolumeSize() ? bytes(r.getMaximumVolumeSize().getValue()) : "-")
                    .add("minimum volume size", r.hasMinimumVolumeSize() ? bytes(r.getMinimumVolumeSize().getValue()) : "-").build();
            case ControllerGetCapabilitiesResponse r -> capabilities(r.getCapabilitiesList().stream()
                    .map(c -> c.getRpc().getType().name()).toList());
            case CreateSnapshotResponse r -> snapshot(r.getSnapshot());
            case GetSnapshotResponse r -> snapshot(r.getSnapshot());
            case ListSnapshotsResponse r -> withToken(snapshots(r.getEntriesList().stream()
                    .map(ListSnapshotsResponse.Entry::getSnapshot).toList()), r.getNextToken());
            case ControllerExpandVolumeResponse r -> View.fields().add("capacity", bytes(r.getCapacityBytes()))
                    .add("node expansion required", r.getNodeExpansionRequired() ? "yes" : "no").build();
            case NodeGetVolumeStatsResponse r -> stats(r);
            case NodeExpandVolumeResponse r -> View.fields().add("capacity", bytes(r.getCapacityBytes())).build();
            case NodeGetCapabilitiesResponse r -> capabilities(r.getCapabilitiesList().stream()
                    .map(c -> c.getRpc().getType().name()).toList());
            case NodeGetInfoResponse r -> View.fields().add("node id", r.getNodeId())
                    .add("max volumes", r.getMaxVolumesPerNode() == 0 ? "no limit" : r.getMaxVolumesPerNode())
                    .add("topology", r.hasAccessibleTopology() ? map(r.getAccessibleTopology().getSegmentsMap()) : "-").build();
            case GroupControllerGetCapabilitiesResponse r -> capabilities(r.getCapabilitiesList().stream()
                    .map(c -> c.getRpc().getType().name()).toList());
            case CreateVolumeGroupSnapshotResponse r -> groupSnapshot(r.getGroupSnapshot());
            case GetVolumeGroupSnapshotResponse r -> groupSnapshot(r.getGroupSnapshot());
            default -> AddonsViews.of(message);
        };
    }

    // ---- pieces shared with the CSI-Addons views ----

    static View.FieldsBuilder volume(Volume v) {
        var f = View.fields().add("volume id", v.getVolumeId()).add("capacity", bytes(v.getCapacityBytes()));
        if (v.hasContentSource()) f.add("source", source(v.getContentSource()));
        if (!v.getVolumeContextMap().isEmpty()) f.add("context", map(v.getVolumeContextMap()));
        if (v.getAccessibleTopologyCount() > 0) f.add("topology", topology(v.getAccessibleTopologyList()));
        return f;
    }

    static View volumes(List<ListVolumesResponse.Entry> entries) {
        var g = View.grid("VOLUME ID", "CAPACITY", "SOURCE", "PUBLISHED ON", "CONDITION");
        for (var e : entries) {
            var v = e.getVolume();
            g.row(v.getVolumeId(), bytes(v.getCapacityBytes()), v.hasContentSource() ? source(v.getContentSource()) : "-",
                    e.hasStatus() ? join(e.getStatus().getPublishedNodeIdsList()) : "-",
                    e.hasStatus() ? condition(e.getStatus().hasVolumeCondition(), e.getStatus().getVolumeCondition()) : "-");
        }
        return g.build("no volumes");
    }

    static View snapshot(Snapshot s) {
        return View.fields().add("snapshot id", s.getSnapshotId()).add("source volume", s.getSourceVolumeId())
                .add("size", bytes(s.getSizeBytes())).add("ready", s.getReadyToUse() ? "yes" : "no")
                .add("created", time(s.hasCreationTime(), s.getCreationTime()))
                .addIf("group snapshot", s.getGroupSnapshotId()).build();
    }

    static View snapshots(List<Snapshot> list) {
        var g = View.grid("SNAPSHOT ID", "SOURCE VOLUME", "SIZE", "READY", "CREATED", "GROUP SNAPSHOT");
        for (Snapshot s : list) {
            g.row(s.getSnapshotId(), s.getSourceVolumeId(), bytes(s.getSizeBytes()), s.getReadyToUse() ? "yes" : "no",
                    time(s.hasCreationTime(), s.getCreationTime()), s.getGroupSnapshotId().isEmpty() ? "-" : s.getGroupSnapshotId());
        }
        return g.build("no snapshots");
    }

    static View groupSnapshot(VolumeGroupSnapshot g) {
        return View.stack(View.fields().add("group snapshot id", g.getGroupSnapshotId())
                        .add("ready", g.getReadyToUse() ? "yes" : "no")
                        .add("created", time(g.hasCreationTime(), g.getCreationTime())).build(),
                snapshots(g.getSnapshotsList()));
    }

    static View stats(NodeGetVolumeStatsResponse r) {
        var g = View.grid("UNIT", "TOTAL", "USED", "AVAILABLE");
        for (VolumeUsage u : r.getUsageList()) {
            boolean inBytes = u.getUnit() == VolumeUsage.Unit.BYTES;
            g.row(u.getUnit().name(), inBytes ? bytes(u.getTotal()) : u.getTotal(),
                    inBytes ? bytes(u.getUsed()) : u.getUsed(), inBytes ? bytes(u.getAvailable()) : u.getAvailable());
        }
        return View.stack(g.build("no usage reported"),
                View.line("condition: " + condition(r.hasVolumeCondition(), r.getVolumeCondition())));
    }

    static View pluginCapabilities(List<PluginCapability> caps) {
        var g = View.grid("KIND", "CAPABILITY");
        for (PluginCapability c : caps) {
            switch (c.getTypeCase()) {
                case SERVICE -> g.row("service", c.getService().getType().name());
                case VOLUME_EXPANSION -> g.row("volume expansion", c.getVolumeExpansion().getType().name());
                default -> g.row("unknown", TextFormat.printer().emittingSingleLine(true).printToString(c));
            }
        }
        return g.build("no capabilities");
    }

    static View capabilities(List<String> names) {
        var g = View.grid("CAPABILITY");
        names.forEach(g::row);
        return g.build("no capabilities");
    }

    static View withToken(View list, String nextToken) {
        return nextToken.isEmpty() ? list : View.stack(list, View.line("next token: " + nextToken + "  (--starting-token, or --paging for all)"));
    }

    static String source(VolumeContentSource s) {
        return switch (s.getTypeCase()) {
            case SNAPSHOT -> "snapshot " + s.getSnapshot().getSnapshotId();
            case VOLUME -> "volume " + s.getVolume().getVolumeId();
            case TYPE_NOT_SET -> "-";
        };
    }

    static String capability(VolumeCapability c) {
        String type = switch (c.getAccessTypeCase()) {
            case BLOCK -> "block";
            case MOUNT -> "mount" + (c.getMount().getFsType().isEmpty() ? "" : "," + c.getMount().getFsType())
                    + (c.getMount().getMountFlagsCount() == 0 ? "" : "," + String.join(",", c.getMount().getMountFlagsList()));
            case ACCESSTYPE_NOT_SET -> "?";
        };
        return c.getAccessMode().getMode().name() + "," + type;
    }

    static String condition(boolean present, VolumeCondition c) {
        if (!present) return "-";
        return (c.getAbnormal() ? "ABNORMAL" : "ok") + (c.getMessage().isEmpty() ? "" : " (" + c.getMessage() + ")");
    }

    static String topology(List<Topology> list) {
        return list.stream().map(t -> map(t.getSegmentsMap())).collect(Collectors.joining(" | "));
    }

    /** {@code 64Mi} when exact, else the bytes and an approximation: {@code 84619382784 (78.8Gi)}. */
    public static String bytes(long n) {
        String[] units = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        int unit = 0;
        while (unit < units.length - 1 && n >= 1L << (10 * (unit + 1))) unit++;
        if (unit == 0 || n % (1L << (10 * unit)) == 0) return ByteSize.format(n);
        return String.format(Locale.ROOT, "%d (%.1f%s)", n, n / (double) (1L << (10 * unit)), units[unit]);
    }

    static String map(Map<String, String> m) {
        if (m.isEmpty()) return "-";
        return new TreeMap<>(m).entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(", "));
    }

    static String join(List<String> items) {
        return items.isEmpty() ? "-" : String.join(", ", items);
    }

    static String time(boolean present, Timestamp t) {
        return present ? Instant.ofEpochSecond(t.getSeconds(), t.getNanos()).toString() : "-";
    }
}
