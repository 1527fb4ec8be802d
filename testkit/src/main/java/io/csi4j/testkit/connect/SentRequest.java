package io.csi4j.testkit.connect;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.UnknownFieldSet;
import com.google.protobuf.util.JsonFormat;
import io.csi4j.proto.csi.CsiProto;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One request the suite sent: to which endpoint, which method ({@code csi.v1.Controller/ListSnapshots}), what.
 * Shown as JSON (protobuf JsonFormat) with every secret value replaced by {@value #MASK}, and as a
 * {@code csi4j call} command line, so a driver author can send the same request again.
 */
public record SentRequest(String endpoint, String method, Message request) {
    public static final String MASK = "***";
    private static final int CSI_SECRET = 1059;

    public SentRequest {
        Objects.requireNonNull(endpoint);
        Objects.requireNonNull(method);
        Objects.requireNonNull(request);
    }

    /** The RPC's name without its service: {@code ListSnapshots}. */
    public String rpc() {
        return method.substring(method.lastIndexOf('/') + 1);
    }

    /** The request as one line of JSON, secrets redacted. */
    public String json() {
        try {
            return JsonFormat.printer().omittingInsignificantWhitespace().print(redact(request));
        } catch (InvalidProtocolBufferException e) {
            return "<" + request.getDescriptorForType().getFullName() + " not printable as JSON: " + e.getMessage() + ">";
        }
    }

    /** {@code csi.v1.Controller/ListSnapshots {"maxEntries":-1}} */
    public String describe() {
        return method + " " + json();
    }

    /** The same request from a shell; redacted secrets are given back with {@code --secrets-file}. */
    public String commandLine() {
        return "csi4j call " + method + " " + shellQuote(json()) + " --endpoint " + shellQuote(endpoint);
    }

    private static String shellQuote(String text) {
        if (text.matches("[A-Za-z0-9_./:=@%+-]+")) return text;
        return "'" + text.replace("'", "'\\''") + "'";
    }

    /** A copy with the values of every field marked {@code csi_secret} (CSI and CSI-Addons) masked, at any depth. */
    static Message redact(Message message) {
        Message.Builder builder = message.toBuilder();
        for (Map.Entry<FieldDescriptor, Object> entry : message.getAllFields().entrySet()) {
            FieldDescriptor field = entry.getKey();
            if (isSecret(field) && field.isMapField()) {
                builder.clearField(field);
                for (Object item : (List<?>) entry.getValue()) {
                    Message pair = (Message) item;
                    FieldDescriptor value = pair.getDescriptorForType().findFieldByName("value");
                    builder.addRepeatedField(field, pair.toBuilder().setField(value, MASK).build());
                }
            } else if (isSecret(field)) {
                builder.clearField(field); // no secret field of the spec is anything but a map; drop what cannot be masked
            } else if (field.getJavaType() == FieldDescriptor.JavaType.MESSAGE && !field.isMapField()) {
                if (field.isRepeated()) {
                    builder.clearField(field);
                    for (Object item : (List<?>) entry.getValue()) builder.addRepeatedField(field, redact((Message) item));
                } else {
                    builder.setField(field, redact((Message) entry.getValue()));
                }
            }
        }
        return builder.build();
    }

    private static boolean isSecret(FieldDescriptor field) {
        var options = field.getOptions();
        if (options.getExtension(CsiProto.csiSecret)) return true;
        // the CSI-Addons descriptors carry the option as an unknown field when built without csi.proto's extensions
        UnknownFieldSet.Field raw = options.getUnknownFields().getField(CSI_SECRET);
        return raw != null && raw.getVarintList().stream().anyMatch(v -> v != 0);
    }
}
