package io.csi4j.cli.reliability;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.GroupControllerGrpc;
import io.csi4j.proto.csi.IdentityGrpc;
import io.csi4j.proto.csi.NodeGrpc;
import io.csi4j.proto.csi.SnapshotMetadataGrpc;
import io.csi4j.cli.testing.RawBytes;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * A plausible request for any RPC, built from its descriptor: real ids where the request names a volume
 * or snapshot, paths under the test's directory, the given secrets in every secrets map. And a way to send
 * raw bytes as any method's request.
 */
final class Seeds {
    private final String volume, snapshot;
    private final Path paths;
    private final Random random;
    private final Map<String, String> secrets;
    private final boolean nodeUsesRealVolume;

    Seeds(String volume, String snapshot, Path paths, Random random, Map<String, String> secrets, boolean nodeUsesRealVolume) {
        this.volume = volume;
        this.snapshot = snapshot;
        this.paths = paths;
        this.random = random;
        this.secrets = secrets;
        this.nodeUsesRealVolume = nodeUsesRealVolume;
    }

    /** Every method of every CSI service, and of the CSI-Addons ones when asked. */
    static List<MethodDescriptor<?, ?>> methods(boolean addons) {
        List<ServiceDescriptor> services = new ArrayList<>(List.of(IdentityGrpc.getServiceDescriptor(),
                ControllerGrpc.getServiceDescriptor(), GroupControllerGrpc.getServiceDescriptor(),
                NodeGrpc.getServiceDescriptor(), SnapshotMetadataGrpc.getServiceDescriptor()));
        if (addons) {
            services.add(io.csi4j.proto.addons.identity.IdentityGrpc.getServiceDescriptor());
            services.add(io.csi4j.proto.addons.volumegroup.ControllerGrpc.getServiceDescriptor());
        }
        List<MethodDescriptor<?, ?>> methods = new ArrayList<>();
        services.forEach(s -> methods.addAll(s.getMethods()));
        return methods;
    }

    static boolean isAddons(MethodDescriptor<?, ?> method) {
        return !method.getServiceName().startsWith("csi.v1.");
    }

    Message seedFor(MethodDescriptor<?, ?> method) {
        Message prototype = (Message) ((MethodDescriptor.PrototypeMarshaller<?>) method.getRequestMarshaller()).getMessagePrototype();
        boolean node = method.getServiceName().endsWith("Node");
        return fill(prototype.getDescriptorForType(), node && !nodeUsesRealVolume, 0);
    }

    private Message fill(Descriptor type, boolean fakeVolume, int depth) {
        DynamicMessage.Builder b = DynamicMessage.newBuilder(type);
        for (FieldDescriptor f : type.getFields()) {
            if (f.getRealContainingOneof() != null && f.getRealContainingOneof().getFields().getFirst() != f) continue;
            if (f.isMapField()) {
                if (f.getName().contains("secret")) secrets.forEach((k, v) -> b.addRepeatedField(f, mapEntry(f, k, v)));
                continue;
            }
            Object value = switch (f.getJavaType()) {
                case STRING -> stringFor(f.getName(), fakeVolume);
                case LONG -> f.getName().contains("bytes") ? World.VOLUME_BYTES : 1L;
                case INT -> 1;
                case BOOLEAN -> false;
                case ENUM -> f.getEnumType().getValues().size() > 1 ? f.getEnumType().getValues().get(1) : f.getEnumType().getValues().getFirst();
                case MESSAGE -> depth < 4 ? fill(f.getMessageType(), fakeVolume, depth + 1) : null;
                case BYTE_STRING -> ByteString.copyFromUtf8("x");
                default -> null;
            };
            if (value == null) continue;
            if (f.isRepeated()) b.addRepeatedField(f, value); else b.setField(f, value);
        }
        return b.build();
    }

    static Message mapEntry(FieldDescriptor map, String key, String value) {
        Descriptor entry = map.getMessageType();
        return DynamicMessage.newBuilder(entry).setField(entry.findFieldByName("key"), key)
                .setField(entry.findFieldByName("value"), value).build();
    }

    private String stringFor(String field, boolean fakeVolume) {
        if (field.endsWith("volume_id") || field.equals("volume_ids") || field.equals("source_volume_ids")) {
            return fakeVolume ? "vol-doesnotexist00-node-1" : volume;
        }
        if (field.contains("snapshot_id")) return field.startsWith("group") ? "gsnap-doesnotexist-node-1" : snapshot;
        if (field.equals("node_id")) return "node-1";
        if (field.endsWith("path")) return paths.resolve(field).toString();
        if (field.equals("name")) return "seed-" + random.nextInt(50);
        return "seed";
    }

    /** Sends {@code request} as {@code method}'s request; the status it got (OK for an answer). */
    static Status call(Channel channel, MethodDescriptor<?, ?> method, byte[] request) {
        var raw = MethodDescriptor.<byte[], byte[]>newBuilder().setType(method.getType())
                .setFullMethodName(method.getFullMethodName()).setRequestMarshaller(RawBytes.MARSHALLER).setResponseMarshaller(RawBytes.MARSHALLER).build();
        var options = CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS);
        try {
            if (method.getType() == MethodDescriptor.MethodType.SERVER_STREAMING) {
                Iterator<byte[]> answers = ClientCalls.blockingServerStreamingCall(channel, raw, options, request);
                for (int i = 0; answers.hasNext() && i < 100; i++) answers.next();
            } else {
                ClientCalls.blockingUnaryCall(channel, raw, options, request);
            }
            return Status.OK;
        } catch (StatusRuntimeException e) {
            return e.getStatus();
        }
    }
}
