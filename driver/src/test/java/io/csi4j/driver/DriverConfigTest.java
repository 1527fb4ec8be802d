package io.csi4j.driver;

import static org.junit.jupiter.api.Assertions.*;

import java.util.List;
import org.junit.jupiter.api.Test;

class DriverConfigTest {
    private static final String VALID = "[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?";

    @Test
    void aValidNodeIdIsItsOwnTopologyValue() {
        for (String id : List.of("node-1", "worker.example.com", "N_1", "a")) {
            assertEquals(id, DriverConfig.topologyValue(id));
        }
    }

    @Test
    void anyOtherNodeIdGetsAStableValidTopologyValue() {
        for (String id : List.of("x".repeat(70), "-leading", "trailing.", "with space", "slash/ed", "ünïcode")) {
            String value = DriverConfig.topologyValue(id);
            assertTrue(value.matches(VALID) && value.length() <= 63, id + " -> " + value);
            assertEquals(value, DriverConfig.topologyValue(id), "stable");
        }
        assertNotEquals(DriverConfig.topologyValue("x".repeat(70)), DriverConfig.topologyValue("x".repeat(71)));
    }
}
