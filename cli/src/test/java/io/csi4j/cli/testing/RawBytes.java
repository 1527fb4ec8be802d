package io.csi4j.cli.testing;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** A gRPC marshaller of plain bytes: for tests that send a method's request, or any bytes at all, as they are. */
public final class RawBytes implements MethodDescriptor.Marshaller<byte[]> {
    public static final RawBytes MARSHALLER = new RawBytes();

    private RawBytes() {}

    @Override
    public InputStream stream(byte[] value) {
        return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
        try {
            return stream.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
