package io.csi4j.sdk.testing;

import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Message;
import io.csi4j.sdk.Secrets;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Fills every field of a message (first member of each oneof, one element per repeated field, nested messages
 * to a few levels) with short valid values, so the message passes validation; secret fields get the given
 * secrets instead.
 */
public final class MessageFiller {
    private MessageFiller() {}

    public static Message fill(Message prototype, Map<String, String> secrets) {
        Message.Builder builder = prototype.newBuilderForType();
        fill(builder, secrets, 0);
        return builder.build();
    }

    private static void fill(Message.Builder builder, Map<String, String> secrets, int depth) {
        Set<OneofDescriptor> oneofsDone = new HashSet<>();
        for (FieldDescriptor field : builder.getDescriptorForType().getFields()) {
            OneofDescriptor oneof = field.getRealContainingOneof();
            if (oneof != null && !oneofsDone.add(oneof)) continue;
            if (field.isMapField()) {
                var entryType = field.getMessageType();
                if (Secrets.isSecret(field)) {
                    secrets.forEach((k, v) -> builder.addRepeatedField(field, entry(builder, field, k, v)));
                } else if (entryType.findFieldByName("value").getJavaType() == FieldDescriptor.JavaType.STRING) {
                    builder.addRepeatedField(field, entry(builder, field, "k", "v"));
                }
                continue;
            }
            Object value = switch (field.getJavaType()) {
                case STRING -> Secrets.isSecret(field) ? secrets.values().iterator().next() : "v-" + field.getName();
                case INT -> 1;
                case LONG -> 1L;
                case BOOLEAN -> true;
                case ENUM -> firstNonZero(field);
                case MESSAGE -> {
                    if (depth > 4) yield null;
                    Message.Builder nested = builder.newBuilderForField(field);
                    fill(nested, secrets, depth + 1);
                    yield nested.build();
                }
                default -> null;
            };
            if (value == null) continue;
            if (field.isRepeated()) builder.addRepeatedField(field, value);
            else builder.setField(field, value);
        }
    }

    private static Message entry(Message.Builder parent, FieldDescriptor field, String key, String value) {
        Message.Builder entry = parent.newBuilderForField(field);
        entry.setField(entry.getDescriptorForType().findFieldByName("key"), key);
        entry.setField(entry.getDescriptorForType().findFieldByName("value"), value);
        return entry.build();
    }

    private static EnumValueDescriptor firstNonZero(FieldDescriptor field) {
        return field.getEnumType().getValues().stream().filter(v -> v.getNumber() != 0).findFirst()
                .orElse(field.getEnumType().getValues().getFirst());
    }
}
