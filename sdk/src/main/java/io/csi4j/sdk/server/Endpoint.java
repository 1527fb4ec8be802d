package io.csi4j.sdk.server;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/**
 * Where a plugin listens: a UNIX domain socket (what the CSI spec requires) or, for development and
 * proxies, a TCP address. Parsed from {@code CSI_ENDPOINT} or a flag.
 *
 * <p>Accepted forms: {@code unix:///abs/path.sock}, {@code unix://rel/path.sock} (relative to the working
 * directory), {@code unix:path}, a bare path, and {@code tcp://host:port}; {@code tcp://:port} binds the
 * loopback address, so nothing is exposed to the network unless a host is named.
 */
public sealed interface Endpoint {

    /** The environment variable the CSI spec uses to hand the listen address to a plugin. */
    String CSI_ENDPOINT = "CSI_ENDPOINT";

    SocketAddress socketAddress();

    /** Canonical text form: {@code unix:///abs/path} or {@code tcp://host:port}. */
    String uri();

    /** A UNIX domain socket; the path is always absolute and normalized. */
    record Unix(Path path) implements Endpoint {
        public Unix {
            path = path.toAbsolutePath().normalize();
        }

        @Override
        public SocketAddress socketAddress() {
            return UnixDomainSocketAddress.of(path);
        }

        @Override
        public String uri() {
            return "unix://" + path;
        }
    }

    /** A TCP address; {@code host} is a name or a literal address (IPv6 without brackets). */
    record Tcp(String host, int port) implements Endpoint {
        public Tcp {
            if (host == null || host.isEmpty()) throw new IllegalArgumentException("tcp endpoint needs a host");
            if (port < 0 || port > 65535) throw new IllegalArgumentException("tcp port out of range: " + port);
        }

        @Override
        public SocketAddress socketAddress() {
            return new InetSocketAddress(host, port);
        }

        @Override
        public String uri() {
            return "tcp://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /** Parses one endpoint; throws {@link IllegalArgumentException} with a message that quotes the input. */
    static Endpoint parse(String text) {
        if (text == null || text.isBlank()) throw new IllegalArgumentException("endpoint is empty");
        if (text.indexOf('\0') >= 0) throw new IllegalArgumentException("endpoint contains a NUL character");
        String s = text.strip();
        try {
            if (s.startsWith("unix://")) return unix(s.substring("unix://".length()), text);
            if (s.startsWith("unix:")) return unix(s.substring("unix:".length()), text);
            if (s.startsWith("tcp://")) return tcp(s.substring("tcp://".length()), text);
            if (s.matches("^[A-Za-z][A-Za-z0-9+.-]*://.*")) {
                throw new IllegalArgumentException("unsupported endpoint scheme in '" + text + "' (use unix:// or tcp://)");
            }
            return unix(s, text);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("invalid socket path in endpoint '" + text + "': " + e.getReason(), e);
        }
    }

    /**
     * Parses an endpoint to connect to (a client: the cli, the testkit): as {@link #parse}, and a TCP endpoint
     * must name its port ({@code 0} means "any port" only to a listener).
     */
    static Endpoint parseToConnect(String text) {
        Endpoint endpoint = parse(text);
        if (endpoint instanceof Tcp tcp && tcp.port() == 0) {
            throw new IllegalArgumentException("endpoint '" + text + "' has port 0, which nothing can be reached on");
        }
        return endpoint;
    }

    /**
     * The endpoint to serve: the flag value when given, else {@code CSI_ENDPOINT} from {@code env}. Fails
     * with a clear message when neither is set.
     */
    static Endpoint resolve(Optional<String> flagValue, Map<String, String> env) {
        if (flagValue.isPresent() && !flagValue.get().isBlank()) return parse(flagValue.get());
        String fromEnv = env.get(CSI_ENDPOINT);
        if (fromEnv == null || fromEnv.isBlank()) {
            throw new IllegalArgumentException("no endpoint: set " + CSI_ENDPOINT + " or pass --endpoint");
        }
        return parse(fromEnv);
    }

    private static Endpoint unix(String path, String original) {
        if (path.isEmpty()) throw new IllegalArgumentException("endpoint '" + original + "' has no socket path");
        return new Unix(Path.of(path));
    }

    private static Endpoint tcp(String authority, String original) {
        String host;
        String port;
        if (authority.startsWith("[")) {
            int close = authority.indexOf(']');
            if (close < 0 || close + 1 >= authority.length() || authority.charAt(close + 1) != ':') {
                throw new IllegalArgumentException("endpoint '" + original + "' is not tcp://[v6-address]:port");
            }
            host = authority.substring(1, close);
            port = authority.substring(close + 2);
        } else {
            int colon = authority.lastIndexOf(':');
            if (colon < 0 || authority.indexOf(':') != colon) {
                throw new IllegalArgumentException("endpoint '" + original + "' is not tcp://host:port");
            }
            host = authority.substring(0, colon);
            port = authority.substring(colon + 1);
        }
        if (host.isEmpty()) host = InetAddress.getLoopbackAddress().getHostAddress();
        if (!port.matches("[0-9]{1,5}")) {
            throw new IllegalArgumentException("endpoint '" + original + "' has no valid port");
        }
        return new Tcp(host, Integer.parseInt(port));
    }
}
