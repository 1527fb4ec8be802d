package io.csi4j.proto;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MapEntry;
import com.google.protobuf.Message;
import com.google.protobuf.TextFormat;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.ValidateVolumeCapabilitiesRequest;
import io.csi4j.proto.csi.ValidateVolumeCapabilitiesResponse;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The generated Builders of messages with map fields {@code parameters} and {@code mutable_parameters}
 * were patched after protoc (src/build/MapAccessorClash.java). A wrong patch would still compile but
 * write one map through the other's accessor, so every write path is checked to land in its own field.
 */
class MapAccessorClashTest {

    static Stream<Message> messagesWithBothMaps() {
        return Stream.of(CreateVolumeRequest.getDefaultInstance(),
                ValidateVolumeCapabilitiesRequest.getDefaultInstance(),
                ValidateVolumeCapabilitiesResponse.Confirmed.getDefaultInstance());
    }

    @Test
    void generatedWritersKeepTheTwoMapsApart() throws InvalidProtocolBufferException {
        var request = CreateVolumeRequest.newBuilder()
                .putParameters("type", "fast")
                .putAllParameters(Map.of("zone", "a"))
                .putMutableParameters("iops", "100")
                .putSecrets("token", "s3cr3t")
                .build();
        assertEquals(Map.of("type", "fast", "zone", "a"), request.getParametersMap());
        assertEquals(Map.of("iops", "100"), request.getMutableParametersMap());

        var parsed = CreateVolumeRequest.parseFrom(request.toByteArray());
        assertEquals(request, parsed);
        assertEquals(Map.of("iops", "100"), parsed.getMutableParametersMap());

        var withoutType = request.toBuilder().removeParameters("type").build();
        assertEquals(Map.of("zone", "a"), withoutType.getParametersMap());
        assertEquals(Map.of("iops", "100"), withoutType.getMutableParametersMap());

        var onlyMutable = request.toBuilder().clearParameters().build();
        assertEquals(Map.of(), onlyMutable.getParametersMap());
        assertEquals(Map.of("iops", "100"), onlyMutable.getMutableParametersMap());

        var merged = CreateVolumeRequest.newBuilder().putParameters("size", "big")
                .mergeFrom(CreateVolumeRequest.newBuilder().putMutableParameters("tier", "gold").build())
                .build();
        assertEquals(Map.of("size", "big"), merged.getParametersMap());
        assertEquals(Map.of("tier", "gold"), merged.getMutableParametersMap());

        assertEquals(CreateVolumeRequest.getDefaultInstance(), request.toBuilder().clear().build());
    }

    @ParameterizedTest
    @MethodSource("messagesWithBothMaps")
    void reflectionWritesEachMapThroughItsOwnField(Message prototype) throws Exception {
        var type = prototype.getDescriptorForType();
        FieldDescriptor parameters = type.findFieldByName("parameters");
        FieldDescriptor mutable = type.findFieldByName("mutable_parameters");

        Message.Builder builder = prototype.newBuilderForType();
        builder.addRepeatedField(parameters, entry(builder, parameters, "p", "1"));
        builder.addRepeatedField(mutable, entry(builder, mutable, "m", "2"));
        Message message = builder.build();
        assertEquals(List.of("p=1"), entries(message, parameters));
        assertEquals(List.of("m=2"), entries(message, mutable));

        // Text format parses through the reflection writers; DynamicMessage shares nothing with them.
        Message reparsed = TextFormat.parse(TextFormat.printer().printToString(message), message.getClass().asSubclass(Message.class));
        assertEquals(message, reparsed);
        var dynamic = DynamicMessage.parseFrom(type, message.toByteString());
        assertEquals(List.of("p=1"), entries(dynamic, parameters));
        assertEquals(List.of("m=2"), entries(dynamic, mutable));

        Message cleared = message.toBuilder().clearField(parameters).build();
        assertEquals(List.of(), entries(cleared, parameters));
        assertEquals(List.of("m=2"), entries(cleared, mutable));
    }

    private static Message entry(Message.Builder builder, FieldDescriptor field, String key, String value) {
        Message.Builder entry = builder.newBuilderForField(field);
        entry.setField(field.getMessageType().findFieldByName("key"), key);
        entry.setField(field.getMessageType().findFieldByName("value"), value);
        return entry.build();
    }

    private static List<String> entries(Message message, FieldDescriptor field) {
        return ((List<?>) message.getField(field)).stream().map(e -> switch (e) {
            case MapEntry<?, ?> m -> m.getKey() + "=" + m.getValue();
            case Message m -> m.getField(m.getDescriptorForType().findFieldByName("key")) + "="
                    + m.getField(m.getDescriptorForType().findFieldByName("value"));
            default -> throw new AssertionError(e);
        }).toList();
    }
}
