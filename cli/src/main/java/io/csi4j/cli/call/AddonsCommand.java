package io.csi4j.cli.call;

import io.csi4j.proto.addons.identity.GetCapabilitiesRequest;
import io.csi4j.proto.addons.identity.GetIdentityRequest;
import io.csi4j.proto.addons.identity.ProbeRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code csi4j addons}: the CSI-Addons identity service, on the CSI-Addons endpoint. */
@Command(name = "addons", description = "CSI-Addons identity (on the CSI-Addons endpoint): identity, capabilities, readiness.")
public final class AddonsCommand {

    @Command(name = "identity", description = "GetIdentity: name, version and manifest.")
    int identity(@Mixin ClientOptions client) {
        try (var s = client.addons()) {
            client.output().show(s.addonsIdentity().getIdentity(GetIdentityRequest.getDefaultInstance()));
        }
        return 0;
    }

    @Command(name = "caps", description = "GetCapabilities: the CSI-Addons features the plugin offers.")
    int caps(@Mixin ClientOptions client) {
        try (var s = client.addons()) {
            client.output().show(s.addonsIdentity().getCapabilities(GetCapabilitiesRequest.getDefaultInstance()));
        }
        return 0;
    }

    @Command(name = "probe", description = "Probe: is the plugin ready? Exits 1 when it reports ready=false.")
    int probe(@Mixin ClientOptions client) {
        try (var s = client.addons()) {
            var r = s.addonsIdentity().probe(ProbeRequest.getDefaultInstance());
            client.output().show(r);
            return r.hasReady() && !r.getReady().getValue() ? 1 : 0;
        }
    }
}
