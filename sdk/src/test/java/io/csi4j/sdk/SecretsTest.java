package io.csi4j.sdk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldOptions;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import com.google.protobuf.UnknownFieldSet;
import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CsiProto;
import io.csi4j.proto.csi.Volume;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SecretsTest {
    /** A schema of our own with secrets nested two levels deep, marked with the csi_secret option. */
    static Descriptor outerType() throws Exception {
        FieldOptions secret = FieldOptions.newBuilder().setExtension(CsiProto.csiSecret, true).build();
        var string = FieldDescriptorProto.Type.TYPE_STRING;
        DescriptorProto inner = DescriptorProto.newBuilder().setName("Inner")
                .addField(FieldDescriptorProto.newBuilder().setName("token").setNumber(1).setType(string).setOptions(secret))
                .addField(FieldDescriptorProto.newBuilder().setName("plain").setNumber(2).setType(string))
                .addField(FieldDescriptorProto.newBuilder().setName("pins").setNumber(3).setType(string)
                        .setLabel(FieldDescriptorProto.Label.LABEL_REPEATED).setOptions(secret))
                .build();
        DescriptorProto outer = DescriptorProto.newBuilder().setName("Outer")
                .addField(FieldDescriptorProto.newBuilder().setName("inner").setNumber(1)
                        .setType(FieldDescriptorProto.Type.TYPE_MESSAGE).setTypeName(".t.Inner"))
                .addField(FieldDescriptorProto.newBuilder().setName("items").setNumber(2)
                        .setLabel(FieldDescriptorProto.Label.LABEL_REPEATED)
                        .setType(FieldDescriptorProto.Type.TYPE_MESSAGE).setTypeName(".t.Inner"))
                .build();
        FileDescriptorProto file = FileDescriptorProto.newBuilder().setName("t.proto").setPackage("t").setSyntax("proto3")
                .addDependency(CsiProto.getDescriptor().getName())
                .addMessageType(inner).addMessageType(outer).build();
        return FileDescriptor.buildFrom(file, new FileDescriptor[] {CsiProto.getDescriptor()}).findMessageTypeByName("Outer");
    }

    private static Message inner(Descriptor type, String token, String plain, String... pins) {
        var b = DynamicMessage.newBuilder(type)
                .setField(type.findFieldByName("token"), token)
                .setField(type.findFieldByName("plain"), plain);
        for (String pin : pins) b.addRepeatedField(type.findFieldByName("pins"), pin);
        return b.build();
    }

    @Test
    void redactsSecretsAtAnyDepthDrivenByTheOptionNotTheName() throws Exception {
        Descriptor outer = outerType();
        Descriptor inner = outer.findFieldByName("inner").getMessageType();
        Message message = DynamicMessage.newBuilder(outer)
                .setField(outer.findFieldByName("inner"), inner(inner, "tok-A", "visible-A", "pin-1", "pin-2"))
                .addRepeatedField(outer.findFieldByName("items"), inner(inner, "tok-B", "visible-B"))
                .setUnknownFields(UnknownFieldSet.newBuilder().addField(99,
                        UnknownFieldSet.Field.newBuilder().addLengthDelimited(com.google.protobuf.ByteString.copyFromUtf8("unknown-secret")).build()).build())
                .build();
        assertTrue(Secrets.mayHoldSecrets(outer));
        assertEquals(Set.of("tok-A", "pin-1", "pin-2", "tok-B"), Secrets.values(message));
        String logged = Secrets.toLogString(message);
        for (String secret : List.of("tok-A", "tok-B", "pin-1", "pin-2", "unknown-secret")) assertFalse(logged.contains(secret), logged);
        assertTrue(logged.contains("visible-A") && logged.contains("visible-B"), logged);
        assertTrue(logged.contains("token: \"***\"") && logged.contains("pins: \"***\" pins: \"***\""), logged);
        assertFalse(logged.contains("\n"), "one line");
    }

    @Test
    void csiAndAddonsSecretsAreFoundByTheirOption() {
        var create = CreateVolumeRequest.newBuilder().setName("pvc-1").putSecrets("password", "hunter2-long").build();
        assertEquals(Set.of("hunter2-long"), Secrets.values(create));
        assertTrue(Secrets.toLogString(create).contains("key: \"password\" value: \"***\""));
        var group = CreateVolumeGroupRequest.newBuilder().setName("g").putSecrets("token", "group-secret").build();
        assertEquals(Set.of("group-secret"), Secrets.values(group));
        assertFalse(Secrets.toLogString(group).contains("group-secret"));
        assertFalse(Secrets.mayHoldSecrets(Volume.getDescriptor()));
        assertEquals(Set.of(), Secrets.values(Volume.newBuilder().setVolumeId("v").build()));
    }

    @Test
    void scrubsRawAndEscapedFormsLongestFirst() {
        Set<String> secrets = Set.of("abc", "abcdef", "qu\"ote", "\u00fcml");
        String text = "x abcdef y abc z qu\\\"ote w \\303\\274ml v \u00fcml";
        assertEquals("x *** y *** z *** w *** v ***", Secrets.scrub(text, secrets));
        assertEquals("nothing", Secrets.scrub("nothing", Set.of()));
    }
}
