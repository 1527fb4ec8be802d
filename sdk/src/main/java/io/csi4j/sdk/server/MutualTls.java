package io.csi4j.sdk.server;

import io.grpc.ChannelCredentials;
import io.grpc.ServerCredentials;
import io.grpc.TlsChannelCredentials;
import io.grpc.TlsServerCredentials;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import io.netty.handler.ssl.OpenSsl;

/**
 * Mutual TLS from PEM files: this side's certificate chain and PKCS#8 private key, and the CA that signs the
 * peers' certificates. Used on both ends of a TCP link between csi4j processes (controller and node agents):
 * the server requires a client certificate from that CA, the client accepts only a server certificate from it.
 */
public record MutualTls(Path certificate, Path privateKey, Path ca) {

    public MutualTls {
        for (Path file : new Path[] {certificate, privateKey, ca}) {
            if (!Files.isReadable(file)) throw new IllegalArgumentException("TLS file " + file + " is not readable");
        }
    }

    /**
     * The TLS engine gRPC picks for these credentials in this process: {@code OpenSSL} when netty-tcnative's BoringSSL
     * loads (its engine works on direct buffers: a copy between nodes costs a fifth less CPU, docs/mobility.md),
     * else {@code JDK}, with the reason. {@code -Dio.netty.handler.ssl.noOpenSsl=true} chooses the JDK's.
     */
    public static String engine() {
        if (OpenSsl.isAvailable()) return "OpenSSL";
        Throwable why = OpenSsl.unavailabilityCause();
        return "JDK" + (why == null || Boolean.getBoolean("io.netty.handler.ssl.noOpenSsl") ? "" : " (OpenSSL: " + why.getMessage() + ")");
    }

    /** Server side: a client certificate is REQUIRED and must chain to {@link #ca()}. */
    public ServerCredentials serverCredentials() {
        try {
            return TlsServerCredentials.newBuilder()
                    .keyManager(certificate.toFile(), privateKey.toFile())
                    .trustManager(ca.toFile())
                    .clientAuth(TlsServerCredentials.ClientAuth.REQUIRE)
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read TLS files " + this, e);
        }
    }

    /** Client side: presents our certificate, trusts only servers whose certificate chains to {@link #ca()}. */
    public ChannelCredentials channelCredentials() {
        try {
            return TlsChannelCredentials.newBuilder()
                    .keyManager(certificate.toFile(), privateKey.toFile())
                    .trustManager(ca.toFile())
                    .build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read TLS files " + this, e);
        }
    }
}
