package io.csi4j.sdk.interceptor;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** Serves {@link CallMetrics} as Prometheus text on {@code GET /metrics}, with the JDK's HTTP server. */
public final class MetricsEndpoint {
    private final HttpServer server;
    private final ExecutorService executor;

    private MetricsEndpoint(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    public static MetricsEndpoint start(InetSocketAddress address, CallMetrics metrics) throws IOException {
        HttpServer server = HttpServer.create(address, 16);
        ExecutorService executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("csi4j-metrics-", 0).factory());
        server.setExecutor(executor);
        server.createContext("/metrics", exchange -> serve(exchange, metrics));
        server.start();
        return new MetricsEndpoint(server, executor);
    }

    private static void serve(HttpExchange exchange, CallMetrics metrics) throws IOException {
        try (exchange) {
            if (!exchange.getRequestURI().getPath().equals("/metrics")) {
                exchange.sendResponseHeaders(404, -1);
                return;
            }
            if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                exchange.sendResponseHeaders(405, -1);
                return;
            }
            byte[] body = metrics.prometheusText().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            if (exchange.getRequestMethod().equals("HEAD")) {
                exchange.sendResponseHeaders(200, -1);
                return;
            }
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** The bound address (with the real port when 0 was asked for). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    public void stop() {
        server.stop(0);
        executor.shutdown();
    }
}
