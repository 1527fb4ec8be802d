package io.csi4j.proto;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.EnumDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.ExtensionRegistry;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The facts of compiled .proto files in the line format of scripts/SpecListing.java (see its header):
 * built from the descriptors protoc embedded in the generated classes, independently of that script.
 */
final class DescriptorFacts {

    private final ExtensionRegistry extensions = ExtensionRegistry.newInstance();
    private final SortedSet<String> facts = new TreeSet<>();

    static SortedSet<String> of(List<FileDescriptor> files) {
        var builder = new DescriptorFacts();
        for (FileDescriptor file : withDependencies(files)) {
            file.getExtensions().forEach(builder.extensions::add);
        }
        files.forEach(builder::file);
        return builder.facts;
    }

    private void file(FileDescriptor file) {
        for (FieldDescriptor ext : file.getExtensions()) {
            facts.add("extend " + ext.getContainingType().getFullName() + " " + ext.getFullName() + "="
                    + ext.getNumber() + " " + type(ext));
        }
        file.getMessageTypes().forEach(this::message);
        file.getEnumTypes().forEach(this::enumeration);
        file.getServices().forEach(this::service);
    }

    private void message(Descriptor message) {
        if (message.getOptions().getMapEntry()) return;              // synthetic entry of a map field
        String name = message.getFullName();
        facts.add("message " + name);
        options(name, message.getOptions());
        for (FieldDescriptor field : message.getFields()) {
            String label = field.isMapField() ? "map" : field.isRepeated() ? "repeated"
                    : field.isRequired() ? "required" : "optional";
            var oneof = field.getRealContainingOneof();
            facts.add("message " + name + " field " + field.getName() + "=" + field.getNumber() + " " + type(field)
                    + " " + label + (oneof == null ? "" : " oneof=" + oneof.getName()));
            options(name + "." + field.getName(), field.getOptions());
        }
        message.getNestedTypes().forEach(this::message);
        message.getEnumTypes().forEach(this::enumeration);
    }

    private void enumeration(EnumDescriptor e) {
        facts.add("enum " + e.getFullName());
        options(e.getFullName(), e.getOptions());
        for (var value : e.getValues()) {
            facts.add("enum " + e.getFullName() + " value " + value.getName() + "=" + value.getNumber());
            options(e.getFullName() + "." + value.getName(), value.getOptions());
        }
    }

    private void service(ServiceDescriptor service) {
        facts.add("service " + service.getFullName());
        options(service.getFullName(), service.getOptions());
        for (var method : service.getMethods()) {
            facts.add("rpc " + service.getFullName() + "." + method.getName() + " "
                    + (method.isClientStreaming() ? "stream " : "") + method.getInputType().getFullName() + " -> "
                    + (method.isServerStreaming() ? "stream " : "") + method.getOutputType().getFullName());
            options(service.getFullName() + "." + method.getName(), method.getOptions());
        }
    }

    /** Re-reads the options with every extension the files declare, so custom options show up as fields. */
    private void options(String target, Message options) {
        try {
            var parsed = DynamicMessage.parseFrom(options.getDescriptorForType(), options.toByteString(), extensions);
            parsed.getAllFields().forEach((field, value) -> facts.add("option " + target + " "
                    + (field.isExtension() ? field.getFullName() : field.getName())
                    + (Boolean.TRUE.equals(value) ? "" : "=" + value)));
        } catch (InvalidProtocolBufferException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String type(FieldDescriptor field) {
        if (field.isMapField()) {
            var entry = field.getMessageType();
            return "map<" + type(entry.findFieldByNumber(1)) + "," + type(entry.findFieldByNumber(2)) + ">";
        }
        return switch (field.getJavaType()) {
            case MESSAGE -> field.getMessageType().getFullName();
            case ENUM -> field.getEnumType().getFullName();
            default -> field.getType().name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    private static Set<FileDescriptor> withDependencies(List<FileDescriptor> files) {
        Set<FileDescriptor> seen = new LinkedHashSet<>();
        var todo = new ArrayDeque<>(files);
        while (!todo.isEmpty()) {
            var file = todo.pop();
            if (seen.add(file)) todo.addAll(file.getDependencies());
        }
        return seen;
    }
}
