package io.csi4j.sdk.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class EndpointTest {
    private static final Path CWD = Path.of("").toAbsolutePath();

    private record Case(String text, Endpoint expected) {}

    @Test
    void parsesEveryAcceptedForm() {
        var cases = new Case[] {
            new Case("unix:///csi/csi.sock", new Endpoint.Unix(Path.of("/csi/csi.sock"))),
            new Case("unix:///var/lib/kubelet/plugins/x/../y/csi.sock", new Endpoint.Unix(Path.of("/var/lib/kubelet/plugins/y/csi.sock"))),
            new Case("unix://rel/path.sock", new Endpoint.Unix(CWD.resolve("rel/path.sock"))),
            new Case("unix:/abs/p.sock", new Endpoint.Unix(Path.of("/abs/p.sock"))),
            new Case("unix:rel.sock", new Endpoint.Unix(CWD.resolve("rel.sock"))),
            new Case("/bare/abs.sock", new Endpoint.Unix(Path.of("/bare/abs.sock"))),
            new Case("bare/rel.sock", new Endpoint.Unix(CWD.resolve("bare/rel.sock"))),
            new Case("  unix:///padded.sock\n", new Endpoint.Unix(Path.of("/padded.sock"))),
            new Case("tcp://127.0.0.1:10000", new Endpoint.Tcp("127.0.0.1", 10000)),
            new Case("tcp://localhost:0", new Endpoint.Tcp("localhost", 0)),
            new Case("tcp://:9000", new Endpoint.Tcp("127.0.0.1", 9000)),
            new Case("tcp://[::1]:9000", new Endpoint.Tcp("::1", 9000)),
            new Case("tcp://0.0.0.0:65535", new Endpoint.Tcp("0.0.0.0", 65535)),
        };
        for (Case c : cases) assertEquals(c.expected(), Endpoint.parse(c.text()), c.text());
    }

    @Test
    void refusesMalformedEndpointsWithTheInputInTheMessage() {
        String[] bad = {"", "   ", "unix://", "unix:", "http://host:80", "tcp://host", "tcp://host:port",
            "tcp://host:70000", "tcp://::1:9000", "tcp://[::1]9000", "tcp://host:1/path", "dns:///x:1"};
        for (String text : bad) {
            var e = assertThrows(IllegalArgumentException.class, () -> Endpoint.parse(text), text);
            if (!text.isBlank()) assertTrue(e.getMessage().contains(text.strip()) || e.getMessage().contains("tcp port"), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse("unix:///a\0b"));
    }

    @Test
    void aClientNeedsAPortToConnectTo() {
        assertEquals(new Endpoint.Tcp("127.0.0.1", 9000), Endpoint.parseToConnect("tcp://:9000"));
        assertEquals(new Endpoint.Unix(Path.of("/csi/csi.sock")), Endpoint.parseToConnect("/csi/csi.sock"));
        var e = assertThrows(IllegalArgumentException.class, () -> Endpoint.parseToConnect("tcp://localhost:0"));
        assertTrue(e.getMessage().contains("tcp://localhost:0"), e.getMessage());
    }

    @Test
    void canonicalUriRoundTrips() {
        for (String text : new String[] {"unix:///csi/csi.sock", "tcp://127.0.0.1:5", "tcp://[::1]:7"}) {
            Endpoint e = Endpoint.parse(text);
            assertEquals(text, e.uri());
            assertEquals(e, Endpoint.parse(e.uri()));
        }
    }

    @Test
    void flagWinsOverEnvironmentAndMissingBothIsAClearError() {
        Map<String, String> env = Map.of("CSI_ENDPOINT", "unix:///env.sock");
        assertEquals(Path.of("/flag.sock"), ((Endpoint.Unix) Endpoint.resolve(Optional.of("/flag.sock"), env)).path());
        assertEquals(Path.of("/env.sock"), ((Endpoint.Unix) Endpoint.resolve(Optional.empty(), env)).path());
        var e = assertThrows(IllegalArgumentException.class, () -> Endpoint.resolve(Optional.empty(), Map.of()));
        assertTrue(e.getMessage().contains("CSI_ENDPOINT"), e.getMessage());
    }
}
