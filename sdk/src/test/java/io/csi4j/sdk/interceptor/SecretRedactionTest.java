package io.csi4j.sdk.interceptor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import io.csi4j.proto.addons.identity.IdentityProto;
import io.csi4j.proto.addons.volumegroup.VolumeGroupProto;
import io.csi4j.proto.csi.CsiProto;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.Secrets;
import io.csi4j.sdk.server.Channels;
import io.csi4j.sdk.server.Endpoint;
import io.csi4j.sdk.server.PluginServer;
import io.csi4j.sdk.testing.LogCapture;
import io.csi4j.sdk.testing.MessageFiller;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Sends secrets through every secret-bearing request type of csi.v1 and CSI-Addons, to services that are
 * careless with them (they put the whole request into their error messages), and checks that no secret shows
 * up in any status message or log line, whatever way the call ends.
 */
class SecretRedactionTest {
    @TempDir
    Path dir;

    static final List<ServiceDescriptor> SERVICES = List.of(
            io.csi4j.proto.csi.IdentityGrpc.getServiceDescriptor(),
            io.csi4j.proto.csi.ControllerGrpc.getServiceDescriptor(),
            io.csi4j.proto.csi.NodeGrpc.getServiceDescriptor(),
            io.csi4j.proto.csi.GroupControllerGrpc.getServiceDescriptor(),
            io.csi4j.proto.csi.SnapshotMetadataGrpc.getServiceDescriptor(),
            io.csi4j.proto.addons.identity.IdentityGrpc.getServiceDescriptor(),
            io.csi4j.proto.addons.volumegroup.ControllerGrpc.getServiceDescriptor(),
            io.csi4j.proto.addons.reclaimspace.ReclaimSpaceControllerGrpc.getServiceDescriptor(),
            io.csi4j.proto.addons.reclaimspace.ReclaimSpaceNodeGrpc.getServiceDescriptor(),
            io.csi4j.proto.addons.replication.ControllerGrpc.getServiceDescriptor());

    /** How the careless services end a call. */
    enum Mode { EXPECTED_ERROR_QUOTING_REQUEST, BUG_THROWN_WITH_REQUEST, ON_ERROR_WITH_REQUEST, INVALID_SECRET_KEY, SUCCESS }

    private volatile Mode mode;

    static Message prototype(MethodDescriptor<?, ?> method) {
        return (Message) ((MethodDescriptor.PrototypeMarshaller<?>) method.getRequestMarshaller()).getMessagePrototype();
    }

    static List<MethodDescriptor<?, ?>> secretBearingMethods() {
        List<MethodDescriptor<?, ?>> out = new ArrayList<>();
        for (ServiceDescriptor service : SERVICES) {
            for (MethodDescriptor<?, ?> method : service.getMethods()) {
                if (Secrets.mayHoldSecrets(prototype(method).getDescriptorForType())) out.add(method);
            }
        }
        return out;
    }

    @Test
    void everyMessageWithASecretFieldIsTheRequestOfAServedMethod() {
        Set<String> withSecrets = new TreeSet<>();
        for (FileDescriptor file : List.of(CsiProto.getDescriptor(), IdentityProto.getDescriptor(), VolumeGroupProto.getDescriptor(),
                io.csi4j.proto.addons.reclaimspace.ReclaimSpaceProto.getDescriptor(),
                io.csi4j.proto.addons.replication.ReplicationProto.getDescriptor())) {
            file.getMessageTypes().forEach(m -> collect(m, withSecrets));
        }
        Set<String> requests = new TreeSet<>();
        secretBearingMethods().forEach(m -> requests.add(prototype(m).getDescriptorForType().getFullName()));
        assertEquals(withSecrets, requests);
        // 19 csi.v1 RPCs, the 5 volumegroup RPCs, the 2 reclaimspace RPCs and the 6 replication RPCs carry secrets
        assertEquals(32, requests.size(), requests.toString());
        assertTrue(requests.contains("replication.PromoteVolumeRequest"));
        assertTrue(requests.contains("volumegroup.ModifyVolumeGroupMembershipRequest"));
        assertTrue(requests.contains("csi.v1.NodeExpandVolumeRequest"));
    }

    private static void collect(Descriptor type, Set<String> out) {
        if (!Secrets.secretFields(type).isEmpty()) out.add(type.getFullName());
        type.getNestedTypes().forEach(n -> collect(n, out));
    }

    private ServerServiceDefinition careless(ServiceDescriptor service) {
        var builder = ServerServiceDefinition.builder(service);
        for (MethodDescriptor<?, ?> method : service.getMethods()) addCareless(builder, method);
        return builder.build();
    }

    @SuppressWarnings("unchecked")
    private <Req, Resp> void addCareless(ServerServiceDefinition.Builder builder, MethodDescriptor<Req, Resp> method) {
        Resp empty = (Resp) ((MethodDescriptor.PrototypeMarshaller<?>) method.getResponseMarshaller()).getMessagePrototype();
        ServerCalls.UnaryMethod<Req, Resp> body = (request, response) -> answer(request, response, empty);
        builder.addMethod(method, switch (method.getType()) {
            case UNARY -> ServerCalls.asyncUnaryCall(body);
            case SERVER_STREAMING -> ServerCalls.asyncServerStreamingCall(body::invoke);
            default -> throw new IllegalStateException(method.getFullMethodName());
        });
    }

    private <Req, Resp> void answer(Req request, StreamObserver<Resp> response, Resp empty) {
        switch (mode) {
            case EXPECTED_ERROR_QUOTING_REQUEST, INVALID_SECRET_KEY ->
                    throw CsiException.failedPrecondition("refused: " + request);
            case BUG_THROWN_WITH_REQUEST -> throw new IllegalStateException("bug while handling " + request,
                    new RuntimeException("cause also quotes " + request));
            case ON_ERROR_WITH_REQUEST -> response.onError(new IllegalArgumentException("bad " + request));
            case SUCCESS -> {
                response.onNext(empty);
                response.onCompleted();
            }
        }
    }

    static Map<String, String> secretsFor(MethodDescriptor<?, ?> method) {
        String rpc = method.getBareMethodName();
        Map<String, String> secrets = new LinkedHashMap<>();
        secrets.put("username", "S3cretUser-" + rpc);
        secrets.put("pass.word_2", "p@ss\"w\\rd-" + rpc);
        secrets.put("key-3", "p\u00e4ssw\u00f6rd-" + rpc);
        return secrets;
    }

    /** The forms a secret could appear in: raw, and escaped as protobuf's text format prints it. */
    static Set<String> forms(String secret) {
        Set<String> forms = new LinkedHashSet<>();
        forms.add(secret);
        forms.add(TextFormat.escapeBytes(ByteString.copyFromUtf8(secret)));
        return forms;
    }

    @Test
    void noSecretReachesAStatusMessageOrTheLogWhateverTheOutcome() throws Exception {
        List<ServerServiceDefinition> definitions = SERVICES.stream().map(this::careless).toList();
        Endpoint endpoint = new Endpoint.Unix(dir.resolve("csi.sock"));
        PluginServer server = PluginServer.builder()
                .listen(endpoint, definitions)
                .validation(ValidationInterceptor.forCsi().withResponseValidation(false))
                .build().start();
        ManagedChannel channel = Channels.connect(endpoint);
        List<MethodDescriptor<?, ?>> methods = secretBearingMethods();
        Map<Mode, Map<String, String>> descriptions = new HashMap<>();
        try (LogCapture log = new LogCapture(Level.ALL)) {
            for (Mode m : Mode.values()) {
                mode = m;
                Map<String, String> byMethod = new LinkedHashMap<>();
                for (MethodDescriptor<?, ?> method : methods) {
                    Map<String, String> secrets = new LinkedHashMap<>(secretsFor(method));
                    if (m == Mode.INVALID_SECRET_KEY) secrets.put("bad key!", "S3cretForBadKey-" + method.getBareMethodName());
                    Message request = MessageFiller.fill(prototype(method), secrets);
                    Status status = call(channel, method, request);
                    byMethod.put(method.getFullMethodName(), status.getCode() + " " + status.getDescription());
                    for (String secret : secrets.values()) {
                        for (String form : forms(secret)) {
                            assertFalse(String.valueOf(status.getDescription()).contains(form),
                                    () -> m + " " + method.getFullMethodName() + " leaked in: " + status);
                        }
                    }
                    expectOutcome(m, method, status);
                }
                descriptions.put(m, byMethod);
            }
            String text = log.text();
            for (MethodDescriptor<?, ?> method : methods) {
                for (String secret : secretsFor(method).values()) {
                    for (String form : forms(secret)) assertFalse(text.contains(form), () -> "log leaked " + form + ":\n" + text);
                }
                assertFalse(text.contains("S3cretForBadKey-" + method.getBareMethodName()));
                // the debug lines were written, redacted, for every method (so the check above is not vacuous)
                String requestLine = method.getFullMethodName() + " request ";
                assertTrue(text.contains(requestLine), () -> "no request line for " + method.getFullMethodName());
                String line = text.lines().filter(l -> l.contains(requestLine)).findFirst().orElseThrow();
                assertTrue(line.contains("key: \"username\" value: \"***\""), line);
                assertTrue(text.contains(method.getFullMethodName() + " INTERNAL"), "call lines are logged");
            }
            assertTrue(text.contains("plugin bug [ref "), "bugs are logged");
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            server.close();
        }
        // the scrubbing had something to scrub: the careless messages quoted the requests, with secrets masked
        String sample = descriptions.get(Mode.EXPECTED_ERROR_QUOTING_REQUEST).get("csi.v1.Controller/CreateVolume");
        assertTrue(sample.startsWith("FAILED_PRECONDITION refused: ") && sample.contains("value: \"***\""), sample);
    }

    private static void expectOutcome(Mode mode, MethodDescriptor<?, ?> method, Status status) {
        Status.Code expected = switch (mode) {
            case EXPECTED_ERROR_QUOTING_REQUEST -> Status.Code.FAILED_PRECONDITION;
            case BUG_THROWN_WITH_REQUEST, ON_ERROR_WITH_REQUEST -> Status.Code.INTERNAL;
            case INVALID_SECRET_KEY -> Status.Code.INVALID_ARGUMENT;
            case SUCCESS -> Status.Code.OK;
        };
        assertEquals(expected, status.getCode(), () -> mode + " " + method.getFullMethodName() + ": " + status);
        if (mode == Mode.INVALID_SECRET_KEY) {
            assertTrue(status.getDescription().startsWith(method.getBareMethodName() + ": secrets has a key that is not"),
                    status.getDescription());
            assertFalse(status.getDescription().contains("bad key!"));
        }
        if (expected == Status.Code.INTERNAL) {
            assertTrue(status.getDescription().matches("internal error in the plugin \\[ref [0-9a-f]{8}\\]; see the plugin log"),
                    status.getDescription());
        }
    }

    @SuppressWarnings("unchecked")
    private static Status call(ManagedChannel channel, MethodDescriptor<?, ?> method, Message request) {
        try {
            var typed = (MethodDescriptor<Message, Message>) method;
            var options = CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS);
            if (method.getType() == MethodDescriptor.MethodType.UNARY) {
                ClientCalls.blockingUnaryCall(channel, typed, options, request);
            } else {
                ClientCalls.blockingServerStreamingCall(channel, typed, options, request).forEachRemaining(r -> { });
            }
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }
}
