package io.csi4j.testkit.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.VolumeCapability;
import org.junit.jupiter.api.Test;

/** A request as a failure shows it: JSON with secret values masked (CSI and CSI-Addons), and a shell-safe csi4j call line. */
class SentRequestTest {

    @Test
    void masksCsiSecretsAndKeepsTheRest() {
        var request = CreateVolumeRequest.newBuilder().setName("it's")
                .addVolumeCapabilities(VolumeCapability.newBuilder().setBlock(VolumeCapability.BlockVolume.getDefaultInstance()))
                .putSecrets("token", "hunter2").putParameters("pool", "fast").build();
        var sent = new SentRequest("unix:///run/it's here/csi.sock", "csi.v1.Controller/CreateVolume", request);
        // JsonFormat writes ' as \u0027: the JSON is always safe inside single quotes
        assertEquals("{\"name\":\"it\\u0027s\",\"volumeCapabilities\":[{\"block\":{}}],\"parameters\":{\"pool\":\"fast\"},\"secrets\":{\"token\":\"***\"}}",
                sent.json());
        assertEquals("csi4j call csi.v1.Controller/CreateVolume '{\"name\":\"it\\u0027s\",\"volumeCapabilities\":[{\"block\":{}}],"
                + "\"parameters\":{\"pool\":\"fast\"},\"secrets\":{\"token\":\"***\"}}' --endpoint 'unix:///run/it'\\''s here/csi.sock'", sent.commandLine());
        assertEquals("CreateVolume", sent.rpc());
    }

    @Test
    void masksCsiAddonsSecrets() {
        var request = io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest.newBuilder().setName("g").putSecrets("token", "hunter2").build();
        String json = new SentRequest("unix:///a.sock", "volumegroup.Controller/CreateVolumeGroup", request).json();
        assertFalse(json.contains("hunter2"), json);
        assertEquals("{\"name\":\"g\",\"secrets\":{\"token\":\"***\"}}", json);
    }
}
