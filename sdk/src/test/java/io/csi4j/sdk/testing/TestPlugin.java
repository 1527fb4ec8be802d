package io.csi4j.sdk.testing;

import io.csi4j.sdk.example.ExampleAddonsIdentity;
import io.csi4j.sdk.example.ExampleController;
import io.csi4j.sdk.example.ExampleIdentity;
import io.csi4j.sdk.paging.PageTokens;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import io.grpc.ManagedChannel;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/** The example plugin served in-process on a real UNIX socket, with client channels that are closed with it. */
public final class TestPlugin implements AutoCloseable {
    public final ExampleController controller = new ExampleController(PageTokens.withRandomKey());
    public final Endpoint endpoint;
    public final PluginServer server;
    private final List<ManagedChannel> channels = new ArrayList<>();

    private TestPlugin(Endpoint endpoint, UnaryOperator<PluginServer.Builder> customize) throws IOException {
        this.endpoint = endpoint;
        this.server = customize.apply(PluginServer.builder()
                .listen(endpoint, new ExampleIdentity(), controller)).build().start();
    }

    public static TestPlugin start(Path dir) throws IOException {
        return start(dir, b -> b);
    }

    public static TestPlugin start(Path dir, UnaryOperator<PluginServer.Builder> customize) throws IOException {
        return new TestPlugin(new Endpoint.Unix(dir.resolve("csi.sock")), customize);
    }

    /** A new channel to the plugin's first endpoint. */
    public ManagedChannel channel() {
        return channel(endpoint);
    }

    public ManagedChannel channel(Endpoint to) {
        ManagedChannel channel = Channels.connect(to);
        channels.add(channel);
        return channel;
    }

    @Override
    public void close() throws InterruptedException {
        for (ManagedChannel channel : channels) channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.close();
    }

    /** The addons identity, for tests that serve a second endpoint. */
    public static ExampleAddonsIdentity addonsIdentity() {
        return new ExampleAddonsIdentity();
    }
}
