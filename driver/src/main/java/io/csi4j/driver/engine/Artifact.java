package io.csi4j.driver.engine;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What an artifact on disk is, as written in its sidecar ({@code <id>.meta}, one flat JSON object)
 * before the artifact gets its final name: enough for an fsck to rebuild the catalog from the pool.
 * {@code source} is {@code ""}, {@code "volume:<id>"} or {@code "snapshot:<id>"}. {@code name} is the
 * CO's name for the object ({@code ""} until the driver labels it, after the artifact is made); for a
 * member of a group snapshot it is the group snapshot's name and {@code group} its id.
 */
public record Artifact(String id, Kind kind, String engine, long sizeBytes, AccessType access, String source,
                       Instant createdAt, String name, String group) {

    public enum Kind { VOLUME, SNAPSHOT }

    /**
     * The CO's name for an object (and, for a member of a group snapshot, the group snapshot's id), written
     * into the sidecar as the artifact is made: one durable write, not a second one to label it afterwards.
     */
    public record Label(String name, String group) {
        public static final Label NONE = new Label("", "");

        public Label {
            java.util.Objects.requireNonNull(name, "name");
            java.util.Objects.requireNonNull(group, "group");
        }
    }

    /** An artifact the driver has not labelled yet. */
    public Artifact(String id, Kind kind, String engine, long sizeBytes, AccessType access, String source, Instant createdAt) {
        this(id, kind, engine, sizeBytes, access, source, createdAt, "", "");
    }

    public Artifact withSize(long newSize) {
        return new Artifact(id, kind, engine, newSize, access, source, createdAt, name, group);
    }

    public Artifact withLabel(Label label) {
        return withLabel(label.name(), label.group());
    }

    public Artifact withLabel(String newName, String newGroup) {
        return new Artifact(id, kind, engine, sizeBytes, access, source, createdAt, newName, newGroup);
    }

    public static String volumeSource(String volumeId) { return "volume:" + volumeId; }

    public static String snapshotSource(String snapshotId) { return "snapshot:" + snapshotId; }

    public String toJson() {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("id", id);
        fields.put("kind", kind.name().toLowerCase());
        fields.put("engine", engine);
        fields.put("sizeBytes", sizeBytes);
        fields.put("access", access.kind());
        fields.put("fsType", access instanceof AccessType.Mount(String fsType) ? fsType : "");
        fields.put("source", source);
        fields.put("createdAt", createdAt.toString());
        if (!name.isEmpty()) fields.put("name", name);
        if (!group.isEmpty()) fields.put("group", group);
        StringBuilder json = new StringBuilder("{");
        fields.forEach((key, value) -> {
            if (json.length() > 1) json.append(',');
            json.append('"').append(key).append("\":");
            if (value instanceof Long n) json.append(n); else json.append('"').append(escape((String) value)).append('"');
        });
        return json.append("}\n").toString();
    }

    private static final Pattern FIELD = Pattern.compile("\"(\\w+)\"\\s*:\\s*(?:\"((?:[^\"\\\\]|\\\\.)*)\"|(-?\\d+))");

    /** Parses what {@link #toJson()} wrote; IllegalArgumentException when a field is missing or bad. */
    public static Artifact parse(String json) {
        Map<String, String> fields = new LinkedHashMap<>();
        Matcher m = FIELD.matcher(json);
        while (m.find()) fields.put(m.group(1), m.group(2) != null ? unescape(m.group(2)) : m.group(3));
        try {
            String access = require(fields, "access");
            return new Artifact(require(fields, "id"),
                    Kind.valueOf(require(fields, "kind").toUpperCase()),
                    require(fields, "engine"),
                    Long.parseLong(require(fields, "sizeBytes")),
                    switch (access) {
                        case "block" -> AccessType.BLOCK;
                        case "mount" -> AccessType.mount(fields.getOrDefault("fsType", ""));
                        default -> throw new IllegalArgumentException("access: " + access);
                    },
                    fields.getOrDefault("source", ""),
                    Instant.parse(require(fields, "createdAt")),
                    fields.getOrDefault("name", ""),
                    fields.getOrDefault("group", ""));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("bad artifact sidecar: " + e.getMessage() + ": " + json.strip(), e);
        }
    }

    private static String require(Map<String, String> fields, String key) {
        String value = fields.get(key);
        if (value == null) throw new IllegalArgumentException("missing \"" + key + "\"");
        return value;
    }

    private static String escape(String s) {
        StringBuilder out = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        return out.toString();
    }

    private static String unescape(String s) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 >= s.length()) { out.append(c); continue; }
            char next = s.charAt(++i);
            if (next == 'u' && i + 4 < s.length()) {
                out.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16));
                i += 4;
            } else {
                out.append(next);
            }
        }
        return out.toString();
    }
}
