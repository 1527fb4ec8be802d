package io.csi4j.sdk.server;

import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.UnixDomainSocketAddress;

/** Client channels to a plugin endpoint, for tests, the cli and the testkit. Plaintext, as CSI prescribes. */
public final class Channels {
    private Channels() {}

    /** One small NIO event loop for all client channels; daemon threads, so it never keeps a JVM alive. */
    private static final class ClientLoop {
        static final EventLoopGroup GROUP = new MultiThreadIoEventLoopGroup(2,
                new DefaultThreadFactory("csi4j-client", true), NioIoHandler.newFactory());
    }

    /** A channel to {@code endpoint}; the caller shuts it down. */
    public static ManagedChannel connect(Endpoint endpoint) {
        return builder(endpoint).build();
    }

    /** A channel to a TCP {@code endpoint} with mutual TLS; {@code authority} is the name the server's certificate must carry. */
    public static NettyChannelBuilder builder(Endpoint.Tcp endpoint, MutualTls tls, String authority) {
        return NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port(), tls.channelCredentials())
                .overrideAuthority(authority)
                .channelType(NioSocketChannel.class)
                .eventLoopGroup(ClientLoop.GROUP);
    }

    /** A builder for {@code endpoint}, to add deadlines, interceptors or message limits before building. */
    public static NettyChannelBuilder builder(Endpoint endpoint) {
        return switch (endpoint) {
            case Endpoint.Unix unix -> NettyChannelBuilder
                    .forAddress(UnixDomainSocketAddress.of(unix.path()), InsecureChannelCredentials.create())
                    .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
                    .eventLoopGroup(ClientLoop.GROUP)
                    // gRPC asks for SO_KEEPALIVE, which domain sockets do not have (Netty would warn per connection)
                    .withOption(ChannelOption.SO_KEEPALIVE, null);
            case Endpoint.Tcp tcp -> NettyChannelBuilder
                    .forAddress(tcp.host(), tcp.port(), InsecureChannelCredentials.create())
                    .channelType(NioSocketChannel.class)
                    .eventLoopGroup(ClientLoop.GROUP);
        };
    }
}
