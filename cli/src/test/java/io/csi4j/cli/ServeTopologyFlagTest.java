package io.csi4j.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

/** {@code csi4j serve --topology KEY=VALUE}: the node's extra topology segments (a zone, for replicas to spread over). */
class ServeTopologyFlagTest {

    @Test
    void repeatedSegmentsAreKept() {
        ServeCommand serve = new ServeCommand();
        serve.topology = List.of("topology.kubernetes.io/zone=zone-a", "example.com/rack=r1", "rack=r_2");
        assertEquals(Map.of("topology.kubernetes.io/zone", "zone-a", "example.com/rack", "r1", "rack", "r_2"), serve.topology());
        assertEquals(Map.of(), new ServeCommand().topology());
    }

    @ParameterizedTest
    @ValueSource(strings = {"zone", "=zone-a", "topology.kubernetes.io/zone=", "topology.kubernetes.io/zone=-a",
            "Topology.Kubernetes.io/zone=a", "topology.csi4j.io/node=n2", "a/b/c=d"})
    void aBadSegmentIsAParameterError(String bad) {
        ServeCommand serve = new ServeCommand();
        serve.topology = List.of(bad);
        var e = assertThrows(CommandLine.ParameterException.class, serve::topology);
        assertTrue(e.getMessage().contains("--topology"), e.getMessage());
    }

    @Test
    void aKeyGivenTwiceIsAParameterError() {
        ServeCommand serve = new ServeCommand();
        serve.topology = List.of("topology.kubernetes.io/zone=a", "topology.kubernetes.io/zone=b");
        assertThrows(CommandLine.ParameterException.class, serve::topology);
    }
}
