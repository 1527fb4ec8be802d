package io.csi4j.cli.call;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.csi4j.driver.json.Json;
import io.csi4j.sdk.Secrets;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.csi4j.proto.cluster.ClusterStatusGrpc;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceControllerGrpc;
import io.csi4j.proto.addons.reclaimspace.ReclaimSpaceNodeGrpc;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.NodeGrpc;

/**
 * {@code csi4j call csi.v1.Controller/ListSnapshots '{"maxEntries":-1}'}: any unary RPC of CSI or CSI-Addons with
 * a request written as protobuf JSON. It is how a failure of {@code csi4j sanity} is replayed: the report prints
 * this command line with the request it sent (secrets redacted: give them back with --secret or --secrets-file).
 */
@Command(name = "call", description = {"Call any unary CSI or CSI-Addons RPC with a request written as protobuf JSON.",
        "E.g. csi4j call csi.v1.Controller/ListSnapshots '{\"maxEntries\":-1}'; the request '-'",
        "is read from stdin."})
public final class CallCommand implements Callable<Integer> {
    private static final List<ServiceDescriptor> SERVICES = List.of(
            io.csi4j.proto.csi.IdentityGrpc.getServiceDescriptor(),
            io.csi4j.proto.csi.ControllerGrpc.getServiceDescriptor(),
            NodeGrpc.getServiceDescriptor(),
            GroupControllerGrpc.getServiceDescriptor(),
            io.csi4j.proto.addons.identity.IdentityGrpc.getServiceDescriptor(),
            io.csi4j.proto.addons.volumegroup.ControllerGrpc.getServiceDescriptor(),
            ReclaimSpaceControllerGrpc.getServiceDescriptor(),
            ReclaimSpaceNodeGrpc.getServiceDescriptor(),
            ClusterStatusGrpc.getServiceDescriptor());
    /** Served on the CSI endpoint; every other service is CSI-Addons, on the addons endpoint. */
    private static final Set<String> ON_CSI_ENDPOINT = Set.of(ClusterStatusGrpc.SERVICE_NAME);
    /** Gson's advice to parse leniently is for the programmer, not for whoever typed the request. */
    private static final Pattern LENIENT_ADVICE = Pattern.compile("Use JsonReader\\.setStrictness\\([^)]*\\) to accept malformed JSON ");
    private static final Pattern JAVA_CLASS_PREFIX = Pattern.compile("\\b(?:[a-z][a-z0-9_]*\\.)+[A-Z][A-Za-z0-9]*(?:Exception|Error): ");

    @Parameters(index = "0", paramLabel = "METHOD", description = "Full name (csi.v1.Controller/ListSnapshots) or, where unique, the RPC (ListSnapshots)")
    String method;

    @Parameters(index = "1", paramLabel = "JSON", defaultValue = "{}", description = "The request as protobuf JSON; '-' reads it from stdin. Default: {}")
    String json;

    @Mixin
    ClientOptions client;

    @Mixin
    SecretOptions secrets;

    @Override
    public Integer call() throws IOException {
        MethodDescriptor<Object, Object> rpc = find(method);
        if (!(rpc.getRequestMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<Object> prototype)) {
            throw new IllegalStateException(rpc.getFullMethodName() + " has no protobuf request type");
        }
        String text = json.equals("-") ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8) : json;
        Message.Builder builder = ((Message) prototype.getMessagePrototype()).newBuilderForType();
        try {
            Json.parse(text);   // strict first: protobuf's parser lets text after the request pass unread
            JsonFormat.parser().merge(text, builder);
        } catch (IllegalArgumentException | InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("not a " + builder.getDescriptorForType().getFullName() + " in JSON: " + readable(e));
        }
        putSecrets(builder, secrets.secrets());
        boolean addons = !rpc.getServiceName().startsWith("csi.v1.") && !ON_CSI_ENDPOINT.contains(rpc.getServiceName());
        try (Session session = addons ? client.addons() : client.csi()) {
            Object answer = session.call(rpc, builder.build());
            client.output().show((Message) answer);
        }
        return 0;
    }

    /** The given secrets replace what the JSON holds in every secret field (the redacted "***" a report prints). */
    private static void putSecrets(Message.Builder builder, Map<String, String> given) {
        if (given.isEmpty()) return;
        for (var field : Secrets.secretFields(builder.getDescriptorForType())) {
            if (!field.isMapField()) continue;
            builder.clearField(field);
            var entry = field.getMessageType();
            given.forEach((k, v) -> {
                Message.Builder pair = builder.newBuilderForField(field);
                pair.setField(entry.findFieldByName("key"), k).setField(entry.findFieldByName("value"), v);
                builder.addRepeatedField(field, pair.build());
            });
        }
    }

    /** What is wrong with the JSON, in one line: the parsers' own words, without the Java class names they wrap them in. */
    static String readable(Exception e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof EOFException) return "it ends before the request is complete" + (t.getMessage() == null ? "" : " (" + t.getMessage() + ")");
        }
        String why = e.getMessage() == null ? "" : e.getMessage();
        why = JAVA_CLASS_PREFIX.matcher(LENIENT_ADVICE.matcher(why).replaceAll("")).replaceAll("").strip();
        return why.isEmpty() ? "it does not parse" : why.lines().findFirst().orElseThrow();
    }

    @SuppressWarnings("unchecked")
    static MethodDescriptor<Object, Object> find(String name) {
        List<MethodDescriptor<?, ?>> unary = SERVICES.stream().flatMap(s -> s.getMethods().stream())
                .filter(m -> m.getType() == MethodDescriptor.MethodType.UNARY).toList();
        List<MethodDescriptor<?, ?>> hits = unary.stream().filter(m -> m.getFullMethodName().equals(name)).toList();
        if (hits.isEmpty()) hits = unary.stream().filter(m -> name.equals(m.getBareMethodName())).toList();
        if (hits.size() == 1) return (MethodDescriptor<Object, Object>) hits.getFirst();
        if (hits.isEmpty()) {
            String then = RpcNames.closest(name, unary.stream().map(MethodDescriptor::getFullMethodName).toList())
                    .map(n -> "; did you mean " + n + "? The").orElse("; the");
            throw new IllegalArgumentException("no unary RPC '" + name + "'" + then + " RPCs csi4j knows:"
                    + RpcNames.list(unary.stream().map(MethodDescriptor::getFullMethodName).toList()));
        }
        throw new IllegalArgumentException("'" + name + "' is ambiguous; one of:"
                + RpcNames.list(hits.stream().map(MethodDescriptor::getFullMethodName).toList()));
    }
}
