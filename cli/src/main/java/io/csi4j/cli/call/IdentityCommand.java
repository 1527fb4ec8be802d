package io.csi4j.cli.call;

import io.csi4j.proto.csi.GetPluginCapabilitiesRequest;
import io.csi4j.proto.csi.GetPluginInfoRequest;
import io.csi4j.proto.csi.ProbeRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code csi4j identity}: the CSI Identity service. */
@Command(name = "identity", description = "CSI Identity: who the plugin is, what it offers, whether it is ready.")
public final class IdentityCommand {

    @Command(name = "info", description = "GetPluginInfo: name, version and manifest.")
    int info(@Mixin ClientOptions client) {
        try (var s = client.csi()) {
            client.output().show(s.identity().getPluginInfo(GetPluginInfoRequest.getDefaultInstance()));
        }
        return 0;
    }

    @Command(name = "caps", description = "GetPluginCapabilities: the services and expansion mode the plugin offers.")
    int caps(@Mixin ClientOptions client) {
        try (var s = client.csi()) {
            client.output().show(s.identity().getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance()));
        }
        return 0;
    }

    @Command(name = "probe", description = "Probe: is the plugin ready? Exits 1 when it reports ready=false.")
    int probe(@Mixin ClientOptions client) {
        try (var s = client.csi()) {
            var r = s.identity().probe(ProbeRequest.getDefaultInstance());
            client.output().show(r);
            return r.hasReady() && !r.getReady().getValue() ? 1 : 0;
        }
    }
}
