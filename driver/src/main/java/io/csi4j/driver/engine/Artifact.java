package io.csi4j.driver.engine;

import io.csi4j.driver.json.Json;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

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
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(group, "group");
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

    /** The sidecar's text: one line, fields in a fixed order, {@code name} and {@code group} only once set. */
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
        return Json.write(fields) + "\n";
    }

    /** Parses what {@link #toJson()} wrote; IllegalArgumentException when a field is missing or bad. */
    public static Artifact parse(String json) {
        try {
            if (!(Json.parse(json) instanceof Map<?, ?> fields)) throw new IllegalArgumentException("not an object");
            String access = text(fields, "access", null);
            return new Artifact(text(fields, "id", null),
                    Kind.valueOf(text(fields, "kind", null).toUpperCase()),
                    text(fields, "engine", null),
                    number(fields, "sizeBytes"),
                    switch (access) {
                        case "block" -> AccessType.BLOCK;
                        case "mount" -> AccessType.mount(text(fields, "fsType", ""));
                        default -> throw new IllegalArgumentException("access: " + access);
                    },
                    text(fields, "source", ""),
                    Instant.parse(text(fields, "createdAt", null)),
                    text(fields, "name", ""),
                    text(fields, "group", ""));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("bad artifact sidecar: " + e.getMessage() + ": " + json.strip(), e);
        }
    }

    /** A string field; {@code fallback} when it is absent, or null when it must be there. */
    private static String text(Map<?, ?> fields, String key, String fallback) {
        Object value = fields.get(key);
        if (value == null && fallback != null) return fallback;
        if (value instanceof String s) return s;
        throw new IllegalArgumentException(value == null ? "missing \"" + key + "\"" : "\"" + key + "\" is not a string");
    }

    private static long number(Map<?, ?> fields, String key) {
        if (fields.get(key) instanceof BigDecimal n) return n.longValueExact();
        throw new IllegalArgumentException("missing or bad \"" + key + "\"");
    }
}
