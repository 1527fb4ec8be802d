package io.csi4j.proto;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.csi4j.proto.addons.identity.IdentityProto;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.VolumeGroupProto;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CsiProto;
import io.csi4j.proto.csi.NodeExpandVolumeRequest;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Our .proto files say exactly what the CSI spec and the CSI-Addons wire say: the committed listing
 * (scripts/spec-listing, extracted from the documents) equals the facts of the compiled descriptors.
 */
class SpecDescriptorTest {

    private static final List<String> PACKAGES = List.of("csi.v1.", "identity.", "volumegroup.");

    @Test
    void descriptorsStateExactlyTheFactsOfTheSpec() throws IOException {
        SortedSet<String> listing = listing();
        SortedSet<String> compiled = new TreeSet<>(DescriptorFacts.of(List.of(CsiProto.getDescriptor(),
                IdentityProto.getDescriptor(), VolumeGroupProto.getDescriptor())));
        compiled.removeIf(fact -> PACKAGES.stream().noneMatch(fact::contains));

        SortedSet<String> missing = new TreeSet<>(listing);
        missing.removeAll(compiled);
        SortedSet<String> extra = new TreeSet<>(compiled);
        extra.removeAll(listing);
        if (!missing.isEmpty() || !extra.isEmpty()) {
            fail("the .proto files differ from the spec listing\n"
                    + "in the spec, not in the descriptors (" + missing.size() + "):\n  " + String.join("\n  ", missing)
                    + "\nin the descriptors, not in the spec (" + extra.size() + "):\n  " + String.join("\n  ", extra));
        }
    }

    @Test
    void listingCoversEveryServiceOfTheWire() throws IOException {
        SortedSet<String> listing = listing();
        for (String service : List.of("csi.v1.Identity", "csi.v1.Controller", "csi.v1.GroupController",
                "csi.v1.SnapshotMetadata", "csi.v1.Node", "identity.Identity", "volumegroup.Controller")) {
            assertTrue(listing.contains("service " + service), service);
        }
        assertTrue(listing.contains("rpc csi.v1.Controller.CreateVolume csi.v1.CreateVolumeRequest -> csi.v1.CreateVolumeResponse"));
        assertTrue(listing.size() > 500, "listing has only " + listing.size() + " facts");
    }

    @Test
    void secretsAreMarkedAtRunTime() {
        var createVolume = CreateVolumeRequest.getDescriptor();
        assertTrue(createVolume.findFieldByName("secrets").getOptions().getExtension(CsiProto.csiSecret));
        assertFalse(createVolume.findFieldByName("name").getOptions().getExtension(CsiProto.csiSecret));
        assertFalse(createVolume.findFieldByName("parameters").getOptions().getExtension(CsiProto.csiSecret));

        var nodeExpand = NodeExpandVolumeRequest.getDescriptor().findFieldByName("secrets").getOptions();
        assertTrue(nodeExpand.getExtension(CsiProto.csiSecret));
        assertTrue(nodeExpand.getExtension(CsiProto.alphaField));

        var createGroup = CreateVolumeGroupRequest.getDescriptor();
        assertTrue(createGroup.findFieldByName("secrets").getOptions().getExtension(CsiProto.csiSecret));
        assertFalse(createGroup.findFieldByName("volume_ids").getOptions().getExtension(CsiProto.csiSecret));
    }

    private static SortedSet<String> listing() throws IOException {
        try (InputStream in = SpecDescriptorTest.class.getResourceAsStream("/spec-listing.txt")) {
            if (in == null) throw new IOException("spec-listing.txt is not on the test class path");
            SortedSet<String> lines = new TreeSet<>();
            new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .filter(line -> !line.isBlank() && !line.startsWith("#"))
                    .forEach(lines::add);
            return lines;
        }
    }
}
