package io.csi4j.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.proto.addons.replication.EnableVolumeReplicationRequest;
import io.csi4j.proto.addons.replication.GetVolumeReplicationInfoRequest;
import io.csi4j.proto.addons.replication.ReplicationProto;
import io.csi4j.proto.csi.CsiProto;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Our replication.proto states exactly the wire facts of csi-addons/spec replication/replication.proto (commit
 * 7b48565): the listing in {@code replication-wire.txt} was checked line by line against it (docs/replication.md,
 * "CSI-Addons VolumeReplication", has the same facts as a table).
 */
class ReplicationWireTest {
    @Test
    void descriptorsStateExactlyTheFactsOfTheCsiAddonsSpec() throws IOException {
        SortedSet<String> compiled = new TreeSet<>(DescriptorFacts.of(List.of(ReplicationProto.getDescriptor())));
        compiled.removeIf(fact -> !fact.contains("replication."));
        SortedSet<String> listed = new TreeSet<>();
        try (InputStream in = ReplicationWireTest.class.getResourceAsStream("/replication-wire.txt")) {
            new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank() && !l.startsWith("#")).forEach(listed::add);
        }
        assertEquals(String.join("\n", listed), String.join("\n", compiled));
    }

    @Test
    void secretsAreMarkedAsCsiSecretsAtRunTime() {
        assertTrue(EnableVolumeReplicationRequest.getDescriptor().findFieldByName("secrets").getOptions().getExtension(CsiProto.csiSecret));
        assertTrue(GetVolumeReplicationInfoRequest.getDescriptor().findFieldByName("secrets").getOptions().getExtension(CsiProto.csiSecret));
        assertTrue(EnableVolumeReplicationRequest.getDescriptor().findFieldByName("replication_id").getOptions()
                .getExtension(ReplicationProto.alphaField));
        assertEquals(1100, ReplicationProto.alphaField.getDescriptor().getNumber());
    }
}
