package io.csi4j.sdk;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DescriptorProtos.FieldOptions;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import com.google.protobuf.UnknownFieldSet;
import io.csi4j.proto.csi.CsiProto;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Secrets as the schema marks them: a field is secret when its descriptor carries the {@code csi.v1.csi_secret}
 * option (CSI and CSI-Addons alike), never because of its name. Used to redact messages before they are logged
 * and to scrub secret values out of any text (error messages) that leaves the plugin.
 */
public final class Secrets {
    /** What a secret value is replaced with. */
    public static final String MASK = "***";
    private static final int CSI_SECRET_FIELD_NUMBER = 1059;

    private static final Map<FieldDescriptor, Boolean> SECRET_FIELDS = new ConcurrentHashMap<>();
    private static final Map<Descriptor, Boolean> MAY_HOLD_SECRETS = new ConcurrentHashMap<>();

    private Secrets() {}

    public static boolean isSecret(FieldDescriptor field) {
        return SECRET_FIELDS.computeIfAbsent(field, Secrets::readOption);
    }

    private static boolean readOption(FieldDescriptor field) {
        FieldOptions options = field.getOptions();
        if (options.getExtension(CsiProto.csiSecret)) return true;
        // a descriptor built without our extension registry keeps the option as an unknown field
        UnknownFieldSet.Field raw = options.getUnknownFields().getField(CSI_SECRET_FIELD_NUMBER);
        return raw != null && raw.getVarintList().stream().anyMatch(v -> v != 0);
    }

    /** True when a message of this type, or any message nested in it, has a secret field. */
    public static boolean mayHoldSecrets(Descriptor type) {
        Boolean known = MAY_HOLD_SECRETS.get(type);
        if (known != null) return known;
        boolean result = scan(type, new HashSet<>());
        MAY_HOLD_SECRETS.put(type, result);
        return result;
    }

    private static boolean scan(Descriptor type, Set<Descriptor> visiting) {
        if (!visiting.add(type)) return false;
        for (FieldDescriptor field : type.getFields()) {
            if (isSecret(field)) return true;
            if (field.getJavaType() == FieldDescriptor.JavaType.MESSAGE && scan(field.getMessageType(), visiting)) return true;
        }
        return false;
    }

    /** The secret fields declared directly in {@code type}. */
    public static List<FieldDescriptor> secretFields(Descriptor type) {
        return type.getFields().stream().filter(Secrets::isSecret).toList();
    }

    /**
     * A copy with every secret value replaced by {@value #MASK} at any depth (map keys are kept, they name the
     * secret) and unknown fields dropped, since a field this plugin does not know may be a secret of a newer spec.
     */
    public static Message redact(Message message) {
        Message.Builder builder = message.toBuilder();
        builder.setUnknownFields(UnknownFieldSet.getDefaultInstance());
        for (Map.Entry<FieldDescriptor, Object> entry : message.getAllFields().entrySet()) {
            FieldDescriptor field = entry.getKey();
            Object value = entry.getValue();
            if (isSecret(field)) {
                mask(builder, field, value);
            } else if (field.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
                if (field.isRepeated()) {
                    builder.clearField(field);
                    for (Object item : (List<?>) value) builder.addRepeatedField(field, redact((Message) item));
                } else {
                    builder.setField(field, redact((Message) value));
                }
            }
        }
        return builder.build();
    }

    private static void mask(Message.Builder builder, FieldDescriptor field, Object value) {
        if (field.isMapField()) {
            builder.clearField(field);
            for (Object item : (List<?>) value) {
                Message entry = (Message) item;
                FieldDescriptor valueField = entry.getDescriptorForType().findFieldByName("value");
                builder.addRepeatedField(field, entry.toBuilder().setField(valueField, maskOf(valueField)).build());
            }
        } else if (field.isRepeated()) {
            builder.clearField(field);
            for (int i = 0; i < ((List<?>) value).size(); i++) {
                Object masked = maskOf(field);
                if (masked != null) builder.addRepeatedField(field, masked);
            }
        } else {
            Object masked = maskOf(field);
            if (masked == null) builder.clearField(field);
            else builder.setField(field, masked);
        }
    }

    /** The mask for a field's type; null where no mask fits (the value is then cleared). */
    private static Object maskOf(FieldDescriptor field) {
        return switch (field.getJavaType()) {
            case STRING -> MASK;
            case BYTE_STRING -> ByteString.copyFromUtf8(MASK);
            default -> null;
        };
    }

    /** Every non-empty secret string in {@code message}, at any depth. */
    public static Set<String> values(Message message) {
        if (!mayHoldSecrets(message.getDescriptorForType())) return Set.of();
        Set<String> out = new LinkedHashSet<>();
        collect(message, out);
        return out;
    }

    private static void collect(Message message, Set<String> out) {
        for (Map.Entry<FieldDescriptor, Object> entry : message.getAllFields().entrySet()) {
            FieldDescriptor field = entry.getKey();
            if (isSecret(field)) {
                addAll(field, entry.getValue(), out);
            } else if (field.getJavaType() == FieldDescriptor.JavaType.MESSAGE && mayHoldSecrets(field.getMessageType())) {
                if (field.isRepeated()) for (Object item : (List<?>) entry.getValue()) collect((Message) item, out);
                else collect((Message) entry.getValue(), out);
            }
        }
    }

    private static void addAll(FieldDescriptor field, Object value, Set<String> out) {
        if (value instanceof List<?> list) {
            for (Object item : list) addOne(item, out, field.isMapField());
        } else {
            addOne(value, out, false);
        }
    }

    private static void addOne(Object value, Set<String> out, boolean mapEntry) {
        switch (value) {
            case Message entry when mapEntry -> {
                Object v = entry.getField(entry.getDescriptorForType().findFieldByName("value"));
                addOne(v, out, false);
            }
            case Message nested -> nested.getAllFields().forEach((f, v) -> addOne(v, out, f.isMapField()));
            case List<?> list -> list.forEach(item -> addOne(item, out, mapEntry));
            case String s when !s.isEmpty() -> out.add(s);
            case ByteString b when !b.isEmpty() -> out.add(b.toStringUtf8());
            default -> { }
        }
    }

    /**
     * {@code text} with every occurrence of the given secret values replaced by {@value #MASK}, also in the
     * escaped form protobuf's text format prints them in (an exception message may quote a whole request).
     */
    public static String scrub(String text, Collection<String> secretValues) {
        if (text == null || text.isEmpty() || secretValues.isEmpty()) return text;
        List<String> needles = new ArrayList<>();
        for (String value : secretValues) {
            needles.add(value);
            String escaped = TextFormat.escapeBytes(ByteString.copyFromUtf8(value));
            if (!escaped.equals(value)) needles.add(escaped);
        }
        needles.sort(Comparator.comparingInt(String::length).reversed());
        String result = text;
        for (String needle : needles) {
            if (!needle.isEmpty()) result = result.replace(needle, MASK);
        }
        return result;
    }

    /** The redacted message in protobuf text format on one line, for logs. */
    public static String toLogString(Message message) {
        return TextFormat.printer().emittingSingleLine(true).printToString(redact(message));
    }
}
