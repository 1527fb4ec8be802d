package io.csi4j.driver.cluster;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.sdk.CsiException;
import io.grpc.Status;
import java.util.Base64;
import org.junit.jupiter.api.Test;

class ClusterPageTokenTest {
    private final ClusterPageToken tokens = ClusterPageToken.withRandomKey();
    private static final String AGENT_TOKEN = "AQd2b2x1bWVzAAAAAAAAAAGx5yZ3r8g3XhZk0W0gq0Vb";  // 44 characters, as csi4j agents issue

    @Test
    void roundTripsNodeAndCursor() {
        String token = tokens.encode("volumes", "", "node-b", AGENT_TOKEN);
        var position = tokens.decode("volumes", "", token);
        assertTrue(position.at("node-b"));
        assertFalse(position.at("node-a"));
        assertEquals(AGENT_TOKEN, position.nodeToken());
        assertNull(tokens.decode("volumes", "", ""), "empty: the start");
    }

    @Test
    void staysWithinTheSpecsStringLimitWhateverTheNodeName() {
        String token = tokens.encode("volume-groups", "f".repeat(24), "a-node-with-a-rather-long-name.example.com", AGENT_TOKEN);
        assertTrue(token.length() <= 128, token.length() + " characters");
    }

    @Test
    void refusesAlteredForeignAndMisdirectedTokens() {
        String token = tokens.encode("snapshots", "filter-1", "node-a", AGENT_TOKEN);
        byte[] raw = Base64.getUrlDecoder().decode(token);
        raw[3] ^= 1;
        String altered = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
        for (String bad : new String[] {altered, "garbage!", "AAAA"}) {
            var e = assertThrows(CsiException.class, () -> tokens.decode("snapshots", "filter-1", bad));
            assertEquals(Status.Code.ABORTED, e.code());
        }
        assertEquals(Status.Code.ABORTED, assertThrows(CsiException.class, () -> tokens.decode("snapshots", "filter-2", token)).code());
        assertEquals(Status.Code.ABORTED, assertThrows(CsiException.class, () -> tokens.decode("volumes", "filter-1", token)).code());
        assertEquals(Status.Code.ABORTED, assertThrows(CsiException.class,
                () -> ClusterPageToken.withRandomKey().decode("snapshots", "filter-1", token)).code(), "another controller's key");
    }
}
