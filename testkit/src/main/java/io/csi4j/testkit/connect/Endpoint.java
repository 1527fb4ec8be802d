package io.csi4j.testkit.connect;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Path;

/** Where a plugin listens: a UNIX socket (what the spec prescribes) or, for proxies and tests, TCP. */
public sealed interface Endpoint {

    SocketAddress address();

    record Unix(Path path) implements Endpoint {
        @Override
        public SocketAddress address() {
            return UnixDomainSocketAddress.of(path);
        }

        @Override
        public String toString() {
            return "unix://" + path;
        }
    }

    record Tcp(String host, int port) implements Endpoint {
        public Tcp {
            if (host.isEmpty()) throw new IllegalArgumentException("tcp endpoint needs a host");
            if (port < 1 || port > 65535) throw new IllegalArgumentException("tcp port out of range: " + port);
        }

        @Override
        public SocketAddress address() {
            return new InetSocketAddress(host, port);
        }

        @Override
        public String toString() {
            return "tcp://" + host + ":" + port;
        }
    }

    /**
     * Accepts {@code unix:///abs/path}, {@code unix://relative/path}, {@code unix:/abs/path}, a bare path, and
     * {@code tcp://host:port} (IPv6 hosts in brackets).
     */
    static Endpoint parse(String text) {
        String s = text.strip();
        if (s.isEmpty()) throw new IllegalArgumentException("empty endpoint");
        if (s.startsWith("unix://")) return unix(s.substring("unix://".length()), text);
        if (s.startsWith("unix:")) return unix(s.substring("unix:".length()), text);
        if (s.startsWith("tcp://")) return tcp(s.substring("tcp://".length()), text);
        if (s.matches("^[A-Za-z][A-Za-z0-9+.-]*://.*")) {
            throw new IllegalArgumentException("unsupported endpoint scheme in '" + text + "' (use unix:// or tcp://)");
        }
        return unix(s, text);
    }

    private static Endpoint unix(String path, String original) {
        if (path.isEmpty()) throw new IllegalArgumentException("unix endpoint without a path: '" + original + "'");
        return new Unix(Path.of(path));
    }

    private static Endpoint tcp(String rest, String original) {
        int slash = rest.indexOf('/');
        if (slash >= 0) rest = rest.substring(0, slash);
        int colon = rest.lastIndexOf(':');
        if (colon <= 0 || colon == rest.length() - 1) {
            throw new IllegalArgumentException("tcp endpoint needs host:port: '" + original + "'");
        }
        String host = rest.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
        int port;
        try {
            port = Integer.parseInt(rest.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("tcp endpoint port is not a number: '" + original + "'");
        }
        return new Tcp(host, port);
    }
}
