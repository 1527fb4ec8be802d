package io.csi4j.sdk.interceptor;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.OneofDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.Message;
import io.csi4j.sdk.Secrets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors;
import java.util.HashSet;

/**
 * Checks a CSI message against the spec's field requirements ({@link CsiRules}): REQUIRED fields at any
 * depth, the size limits, the secret key charset, banned control characters in names and non-negative
 * numbers. Answers human-readable violations that name the field by its path, never its value.
 */
public final class SpecValidator {
    private static final Pattern SECRET_KEY = Pattern.compile("[A-Za-z0-9._-]+");

    private record Rules(List<FieldDescriptor> required, List<OneofDescriptor> oneofs, List<FieldDescriptor> atLeastOne) {}

    private final Map<String, Rules> byMessage = new HashMap<>();
    /** The REQUIRED fields of the table that {@link CsiRules#REQUIRED_BUT_EMPTY_ACCEPTED} exempts. */
    private final Set<String> acceptedEmpty = new HashSet<>();
    private final Set<String> services;
    private final Set<String> methods;

    private SpecValidator(List<FileDescriptor> files) {
        Set<String> services = new LinkedHashSet<>();
        Set<String> methods = new LinkedHashSet<>();
        Map<String, MethodDescriptor> methodsByName = new HashMap<>();
        for (FileDescriptor file : files) {
            for (ServiceDescriptor service : file.getServices()) {
                services.add(service.getFullName());
                for (MethodDescriptor method : service.getMethods()) {
                    methodsByName.put(service.getFullName() + "/" + method.getName(), method);
                }
            }
        }
        for (CsiRules.Rpc rpc : CsiRules.RPCS) {
            MethodDescriptor method = methodsByName.get(rpc.method());
            if (method == null) throw new IllegalStateException("rule for unknown RPC " + rpc.method());
            methods.add(rpc.method());
            add(method.getInputType(), rpc.request(), List.of(), List.of());
            add(method.getOutputType(), rpc.response(), List.of(), List.of());
        }
        Map<String, Descriptor> messages = new HashMap<>();
        for (FileDescriptor file : files) file.getMessageTypes().forEach(m -> index(m, messages));
        for (CsiRules.Nested nested : CsiRules.NESTED) {
            Descriptor type = messages.get(nested.message());
            if (type == null) throw new IllegalStateException("rule for unknown message " + nested.message());
            add(type, nested.required(), nested.requiredOneofs(), nested.atLeastOneOf());
        }
        if (!acceptedEmpty.equals(CsiRules.REQUIRED_BUT_EMPTY_ACCEPTED.keySet())) {
            throw new IllegalStateException("accepted empty but not a REQUIRED repeated field of the table: "
                    + CsiRules.REQUIRED_BUT_EMPTY_ACCEPTED.keySet() + " vs " + acceptedEmpty);
        }
        this.services = Set.copyOf(services);
        this.methods = Set.copyOf(methods);
    }

    /** The validator for csi.v1 and the CSI-Addons services of {@link CsiRules#FILES}. */
    public static SpecValidator forCsi() {
        return Holder.CSI;
    }

    private static final class Holder {
        static final SpecValidator CSI = new SpecValidator(CsiRules.FILES);
    }

    /** Full names of the services this validator knows ({@code csi.v1.Controller}, {@code volumegroup.Controller}, ...). */
    public Set<String> services() {
        return services;
    }

    /** Full names ({@code service/method}) of the RPCs that have an entry in the rule table. */
    public Set<String> methodsWithRules() {
        return methods;
    }

    private static void index(Descriptor type, Map<String, Descriptor> out) {
        out.put(type.getFullName(), type);
        type.getNestedTypes().forEach(n -> index(n, out));
    }

    private void add(Descriptor type, List<String> required, List<String> oneofs, List<String> atLeastOne) {
        if (byMessage.containsKey(type.getFullName())) throw new IllegalStateException("two rules for " + type.getFullName());
        byMessage.put(type.getFullName(), new Rules(
                required.stream().map(n -> field(type, n)).filter(this::enforced).toList(),
                oneofs.stream().map(n -> type.getOneofs().stream().filter(o -> o.getName().equals(n)).findFirst()
                        .orElseThrow(() -> new IllegalStateException(type.getFullName() + " has no oneof " + n))).toList(),
                atLeastOne.stream().map(n -> field(type, n)).toList()));
    }

    /** A REQUIRED field is checked unless the table accepts it empty, which only a repeated or map field can be. */
    private boolean enforced(FieldDescriptor f) {
        if (!CsiRules.REQUIRED_BUT_EMPTY_ACCEPTED.containsKey(f.getFullName())) return true;
        if (!f.isRepeated()) throw new IllegalStateException(f.getFullName() + " is accepted empty but is not repeated or a map");
        acceptedEmpty.add(f.getFullName());
        return false;
    }

    private static FieldDescriptor field(Descriptor type, String name) {
        FieldDescriptor f = type.findFieldByName(name);
        if (f == null) throw new IllegalStateException(type.getFullName() + " has no field " + name);
        return f;
    }

    /** Every violation in {@code message}, e.g. {@code volume_capabilities[0].access_mode is REQUIRED}. */
    public List<String> check(Message message) {
        List<String> out = new ArrayList<>();
        check(message, "", out);
        return out;
    }

    private void check(Message message, String path, List<String> out) {
        Rules rules = byMessage.get(message.getDescriptorForType().getFullName());
        if (rules != null) {
            for (FieldDescriptor f : rules.required()) {
                if (isMissing(message, f)) out.add(path + f.getName() + " is REQUIRED");
            }
            for (OneofDescriptor o : rules.oneofs()) {
                if (!message.hasOneof(o)) {
                    out.add(path + o.getName() + " is REQUIRED (one of " + o.getFields().stream()
                            .map(FieldDescriptor::getName).collect(Collectors.joining(", ")) + ")");
                }
            }
            if (!rules.atLeastOne().isEmpty() && rules.atLeastOne().stream().allMatch(f -> isUnset(message, f))) {
                out.add(rules.atLeastOne().stream().map(f -> path + f.getName()).collect(Collectors.joining(" or ")) + " is REQUIRED");
            }
        }
        for (Map.Entry<FieldDescriptor, Object> entry : message.getAllFields().entrySet()) {
            FieldDescriptor f = entry.getKey();
            String fieldPath = path + f.getName();
            Object value = entry.getValue();
            if (f.isMapField()) {
                checkMap(f, (List<?>) value, fieldPath, out);
                continue;
            }
            switch (f.getJavaType()) {
                case STRING -> checkStrings(f, value, fieldPath, out);
                case MESSAGE -> {
                    if (value instanceof List<?> list) {
                        for (int i = 0; i < list.size(); i++) check((Message) list.get(i), fieldPath + "[" + i + "].", out);
                    } else {
                        check((Message) value, fieldPath + ".", out);
                    }
                }
                case INT, LONG -> {
                    if (CsiRules.NON_NEGATIVE.contains(f.getFullName()) && ((Number) value).longValue() < 0) {
                        out.add(fieldPath + " must not be negative");
                    }
                }
                default -> { }
            }
        }
    }

    private static void checkStrings(FieldDescriptor f, Object value, String fieldPath, List<String> out) {
        Integer total = CsiRules.TOTAL_LIMITS.get(f.getFullName());
        if (value instanceof List<?> list) {
            long sum = 0;
            for (int i = 0; i < list.size(); i++) {
                String s = (String) list.get(i);
                sum += utf8Length(s);
                if (total == null) checkString(f, s, fieldPath + "[" + i + "]", out);
            }
            if (total != null && sum > total) out.add(fieldPath + " exceeds " + total + " bytes in total (" + sum + ")");
        } else {
            checkString(f, (String) value, fieldPath, out);
        }
    }

    private static void checkString(FieldDescriptor f, String s, String path, List<String> out) {
        int limit = CsiRules.STRING_LIMIT_OVERRIDES.getOrDefault(f.getFullName(), CsiRules.STRING_LIMIT);
        int length = utf8Length(s);
        if (length > limit) out.add(path + " exceeds " + limit + " bytes (" + length + ")");
        if (CsiRules.NO_CONTROL_CHARACTERS.contains(f.getFullName()) && s.chars().anyMatch(SpecValidator::isBanned)) {
            out.add(path + " contains a control character (U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F-U+009F)");
        }
    }

    private static boolean isBanned(int c) {
        return c <= 0x08 || c == 0x0B || c == 0x0C || (c >= 0x0E && c <= 0x1F) || (c >= 0x7F && c <= 0x9F);
    }

    private void checkMap(FieldDescriptor f, List<?> entries, String fieldPath, List<String> out) {
        boolean secret = Secrets.isSecret(f);
        long size = 0;
        boolean badKey = false;
        for (Object item : entries) {
            Message entry = (Message) item;
            Descriptor type = entry.getDescriptorForType();
            Object key = entry.getField(type.findFieldByName("key"));
            Object value = entry.getField(type.findFieldByName("value"));
            if (key instanceof String k) {
                size += utf8Length(k);
                if (secret && !SECRET_KEY.matcher(k).matches()) badKey = true;
            }
            if (value instanceof String v) size += utf8Length(v);
            else if (value instanceof Message m) check(m, fieldPath + ".", out);
        }
        if (size > CsiRules.MAP_LIMIT) out.add(fieldPath + " exceeds " + CsiRules.MAP_LIMIT + " bytes (" + size + ")");
        // the key itself is not echoed: a CO that mixed up keys and values would leak a secret through it
        if (badKey) out.add(fieldPath + " has a key that is not only alphanumerics, '-', '_' and '.'");
    }

    private static boolean isMissing(Message message, FieldDescriptor f) {
        if (f.isRepeated()) return message.getRepeatedFieldCount(f) == 0;
        return switch (f.getJavaType()) {
            case MESSAGE -> !message.hasField(f);
            case STRING -> ((String) message.getField(f)).isEmpty();
            case BYTE_STRING -> ((ByteString) message.getField(f)).isEmpty();
            case ENUM -> ((Descriptors.EnumValueDescriptor) message.getField(f)).getNumber() == 0;
            // proto3 cannot tell an unset bool or number from its default, which is a valid value
            default -> false;
        };
    }

    /**
     * For "at least one of": a zero number counts as unset, as the spec says for CapacityRange. A singular field is
     * set exactly when getAllFields would list it (a proto3 number: when it is not zero), which hasField answers
     * without building the whole field map once per field.
     */
    private static boolean isUnset(Message message, FieldDescriptor f) {
        if (f.isRepeated()) return message.getRepeatedFieldCount(f) == 0;
        return !message.hasField(f);
    }

    private static int utf8Length(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) n += 1;
            else if (c < 0x800) n += 2;
            else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else n += 3;
        }
        return n;
    }
}
