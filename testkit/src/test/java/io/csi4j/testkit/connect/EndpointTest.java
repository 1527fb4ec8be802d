package io.csi4j.testkit.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EndpointTest {

    @Test
    void unixForms() {
        assertEquals(new Endpoint.Unix(Path.of("/run/csi/csi.sock")), Endpoint.parse("unix:///run/csi/csi.sock"));
        assertEquals(new Endpoint.Unix(Path.of("csi4j-data/csi.sock")), Endpoint.parse("unix://csi4j-data/csi.sock"));
        assertEquals(new Endpoint.Unix(Path.of("./csi4j-data/csi.sock")), Endpoint.parse("unix://./csi4j-data/csi.sock"));
        assertEquals(new Endpoint.Unix(Path.of("/abs.sock")), Endpoint.parse("unix:/abs.sock"));
        assertEquals(new Endpoint.Unix(Path.of("/var/lib/kubelet/plugins/x/csi.sock")), Endpoint.parse("/var/lib/kubelet/plugins/x/csi.sock"));
        assertEquals(new Endpoint.Unix(Path.of("rel.sock")), Endpoint.parse("  rel.sock "));
    }

    @Test
    void tcpForms() {
        assertEquals(new Endpoint.Tcp("127.0.0.1", 10000), Endpoint.parse("tcp://127.0.0.1:10000"));
        assertEquals(new Endpoint.Tcp("localhost", 1), Endpoint.parse("tcp://localhost:1/"));
        assertEquals(new Endpoint.Tcp("::1", 9000), Endpoint.parse("tcp://[::1]:9000"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "unix://", "tcp://host", "tcp://:80", "tcp://host:http", "tcp://host:70000", "http://host:80", "dns:///x"})
    void rejectsWhatItCannotConnectTo(String text) {
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse(text));
    }

    @Test
    void printsBackAsAnEndpoint() {
        assertEquals("unix:///a/b.sock", Endpoint.parse("/a/b.sock").toString());
        assertEquals("tcp://h:1", Endpoint.parse("tcp://h:1").toString());
    }
}
