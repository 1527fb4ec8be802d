package io.csi4j.sdk.interceptor;

import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.KnownLength;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Arrays;

/**
 * Bytes that are not a valid request answer INVALID_ARGUMENT. grpc-java parses a request before any
 * interceptor sees it and answers a parse failure with {@code UNKNOWN: Application error processing RPC},
 * which tells a CO nothing and reads like a plugin bug. So a service is served on raw bytes and parsed
 * one step later ({@link ServerInterceptors#useMarshalledMessages}), where a failure can be answered. Responses
 * pass through as the service's own stream, unread: turned into bytes, a 1 MiB chunk of a copy between nodes was
 * serialized, read back and copied twice more before it reached the transport.
 */
public final class MalformedRequests implements ServerInterceptor {
    private static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try (stream) {
                if (!(stream instanceof KnownLength)) return stream.readAllBytes();
                // gRPC's message stream knows its length: one array of that size, where readAllBytes allocated 16 KiB
                // chunks (two per create+delete iteration, a tenth of the server's allocation) and copied out of them
                byte[] bytes = new byte[stream.available()];
                int read = stream.readNBytes(bytes, 0, bytes.length);
                if (read < bytes.length) bytes = Arrays.copyOf(bytes, read);
                int more = stream.read();
                if (more < 0) return bytes;
                byte[] rest = stream.readAllBytes();   // available() fell short: never for gRPC's streams
                byte[] all = Arrays.copyOf(bytes, bytes.length + 1 + rest.length);
                all[bytes.length] = (byte) more;
                System.arraycopy(rest, 0, all, bytes.length + 1, rest.length);
                return all;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    /** The response as its own marshaller streams it (protobuf's knows its length and writes into the transport). */
    private static final MethodDescriptor.Marshaller<InputStream> AS_STREAMED = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(InputStream value) {
            return value;
        }

        @Override
        public InputStream parse(InputStream stream) {
            return stream;
        }
    };

    private MalformedRequests() {}

    /** {@code service} (already intercepted) served on bytes, with malformed requests answered INVALID_ARGUMENT. */
    public static ServerServiceDefinition reject(ServerServiceDefinition service) {
        return ServerInterceptors.intercept(ServerInterceptors.useMarshalledMessages(service, BYTES, AS_STREAMED), new MalformedRequests());
    }

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(ServerCall<ReqT, RespT> call, Metadata headers,
                                                                 ServerCallHandler<ReqT, RespT> next) {
        return new SimpleForwardingServerCallListener<>(next.startCall(call, headers)) {
            private boolean rejected;

            @Override
            public void onMessage(ReqT message) {
                if (rejected) return;
                try {
                    super.onMessage(message);   // parses; everything after the parse has its own error handling
                } catch (RuntimeException e) {
                    rejected = true;
                    String why = e.getCause() != null && e.getCause().getMessage() != null ? e.getCause().getMessage() : "malformed";
                    call.close(Status.INVALID_ARGUMENT.withDescription("the request is not a valid "
                            + call.getMethodDescriptor().getFullMethodName() + " request: " + why), new Metadata());
                }
            }

            @Override
            public void onHalfClose() {
                if (!rejected) super.onHalfClose();
            }
        };
    }
}
