package io.csi4j.driver.id;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * An id the driver generates: {@code <kind>-<16 random base32>-<node tag>}, e.g.
 * {@code vol-k3j5n2b7q4m6x2ab-node-1}. Short (at most 86 bytes), URL- and filename-safe, and it
 * names the node that owns the object, so a request for another node's object can be refused
 * with that node's name. Anything from the wire goes through {@link #parse} before it becomes a
 * path: a string that does not parse cannot name a file of ours.
 */
public record ObjectId(Kind kind, String random, String nodeTag) {

    public enum Kind {
        VOLUME("vol"), SNAPSHOT("snap"), GROUP_SNAPSHOT("gsnap"), VOLUME_GROUP("vg");

        private final String prefix;

        Kind(String prefix) { this.prefix = prefix; }

        public String prefix() { return prefix; }
    }

    private static final String BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
    private static final int RANDOM_LENGTH = 16;
    private static final Pattern DNS_NAME = Pattern.compile("[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?");
    private static final Pattern HASHED_TAG = Pattern.compile("_[a-z2-7]{12}");
    private static final Pattern SHAPE = Pattern.compile(
            "(vol|snap|gsnap|vg)-([a-z2-7]{16})-([a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?|_[a-z2-7]{12}|_cluster)");
    /**
     * The tag of a group snapshot that spans nodes (cut by the cluster controller): no node id yields it (a
     * node tag is a DNS name or {@code _} and 12 base32), and every node holding a part owns it.
     */
    public static final String CLUSTER_TAG = "_cluster";
    private static final SecureRandom RANDOM = new SecureRandom();

    public ObjectId {
        if (random.length() != RANDOM_LENGTH || !random.chars().allMatch(c -> BASE32.indexOf(c) >= 0)) {
            throw new IllegalArgumentException("bad random part: " + random);
        }
        if (!isNodeTag(nodeTag) && !(kind == Kind.GROUP_SNAPSHOT && nodeTag.equals(CLUSTER_TAG))) {
            throw new IllegalArgumentException("bad node tag: " + nodeTag);
        }
    }

    /** 16 base32 characters from one draw of 80 random bits (one SecureRandom call instead of one per character). */
    public static ObjectId generate(Kind kind, String nodeId) {
        byte[] bits = new byte[RANDOM_LENGTH * 5 / 8];
        RANDOM.nextBytes(bits);
        StringBuilder random = new StringBuilder(RANDOM_LENGTH);
        for (int i = 0; i < RANDOM_LENGTH; i++) {
            int at = i * 5;   // bit offset: 5 bits per character, big-endian across the bytes
            int pair = (bits[at / 8] & 0xff) << 8 | (at / 8 + 1 < bits.length ? bits[at / 8 + 1] & 0xff : 0);
            random.append(BASE32.charAt((pair >>> (11 - at % 8)) & 31));
        }
        return new ObjectId(kind, random.toString(), nodeTag(nodeId));
    }

    /** Parses an id of the given kind; empty for anything else (wrong kind, wrong shape, hostile input). */
    public static Optional<ObjectId> parse(Kind expected, String text) {
        if (text == null || text.length() > 128) return Optional.empty();
        var m = SHAPE.matcher(text);
        if (!m.matches() || !m.group(1).equals(expected.prefix())) return Optional.empty();
        boolean clusterWide = m.group(3).equals(CLUSTER_TAG);
        if (clusterWide ? expected != Kind.GROUP_SNAPSHOT : !isNodeTag(m.group(3))) return Optional.empty();
        return Optional.of(new ObjectId(expected, m.group(2), m.group(3)));
    }

    /** The node id itself when it is a short DNS name, else a stable hash of it. */
    public static String nodeTag(String nodeId) {
        if (DNS_NAME.matcher(nodeId).matches() && !nodeId.contains("..")) return nodeId;
        return hashedTag(nodeId);
    }

    /** {@code _} and 12 base32 of the node id's SHA-256: the tag a long or odd node id gets, for any node id. */
    public static String hashedTag(String nodeId) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(nodeId.getBytes(StandardCharsets.UTF_8));
            StringBuilder tag = new StringBuilder("_");
            long bits = 0;
            for (int i = 0; i < 8; i++) bits = (bits << 8) | (digest[i] & 0xff);
            for (int i = 0; i < 12; i++) tag.append(BASE32.charAt((int) ((bits >>> (64 - 5 * (i + 1))) & 31)));
            return tag.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A group snapshot that spans nodes (its parts share this id on every node that holds one). */
    public static ObjectId clusterGroupSnapshot() {
        ObjectId one = generate(Kind.GROUP_SNAPSHOT, "x");
        return new ObjectId(Kind.GROUP_SNAPSHOT, one.random(), CLUSTER_TAG);
    }

    public boolean clusterWide() {
        return nodeTag.equals(CLUSTER_TAG);
    }

    /** True when {@code nodeId} holds this object; every node may hold a part of a cluster-wide one. */
    public boolean ownedBy(String nodeId) {
        return clusterWide() || nodeTag.equals(nodeTag(nodeId));
    }

    @Override
    public String toString() {
        return kind.prefix() + "-" + random + "-" + nodeTag;
    }

    static boolean isNodeTag(String tag) {
        return (DNS_NAME.matcher(tag).matches() && !tag.contains("..")) || HASHED_TAG.matcher(tag).matches();
    }
}
