package io.csi4j.testkit.connect;

import io.csi4j.sdk.server.Endpoint;
import io.grpc.ClientInterceptor;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * One gRPC channel to a plugin over plain NIO (no native transport, no shaded Netty): a UNIX domain
 * socket or TCP. Close it to release the channel and its event loop.
 */
public final class PluginConnection implements AutoCloseable {
    private final Endpoint endpoint;
    private final EventLoopGroup loop;
    private final ManagedChannel channel;

    private PluginConnection(Endpoint endpoint, ClientInterceptor... interceptors) {
        this.endpoint = endpoint;
        this.loop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        NettyChannelBuilder builder = switch (endpoint) {
            case Endpoint.Unix unix -> NettyChannelBuilder
                    .forAddress(unix.socketAddress(), InsecureChannelCredentials.create())
                    .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
                    .withOption(ChannelOption.SO_KEEPALIVE, null); // a domain socket has no keepalive: gRPC's default would be logged as unknown
            case Endpoint.Tcp tcp -> NettyChannelBuilder
                    .forAddress(tcp.socketAddress(), InsecureChannelCredentials.create())
                    .channelType(NioSocketChannel.class);
        };
        this.channel = builder.eventLoopGroup(loop)
                .intercept(interceptors)
                .maxInboundMessageSize(64 << 20)
                .build();
    }

    public static PluginConnection open(String endpoint, ClientInterceptor... interceptors) {
        return new PluginConnection(Endpoint.parseToConnect(endpoint), interceptors);
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    public ManagedChannel channel() {
        return channel;
    }

    @Override
    public void close() {
        channel.shutdownNow();
        try {
            channel.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
    }

    @Override
    public String toString() {
        return endpoint.toString();
    }
}
