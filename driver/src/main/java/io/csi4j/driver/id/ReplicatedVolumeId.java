package io.csi4j.driver.id;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The id of a replicated volume: {@code vol-<16 random base32>-<tag>__<tag>[__<tag>]}, one node tag per replica, the
 * node of the first primary first. Every replica's node is in the id, so a router finds the replicas (and asks them
 * which one is primary now) without state of its own; the set is fixed at creation as the PV's node affinity is.
 *
 * <p>{@code __} cannot occur inside a tag (a DNS-name tag has no {@code _}; a hashed tag is one {@code _} and base32),
 * so the split is unambiguous. An id is at most 128 bytes (the CSI limit): when the plain tags do not fit, the longest
 * are replaced by their hashed form ({@link ObjectId#hashedTag}) until they do, so a replica's node is matched by
 * either of its two tags. An ordinary {@link ObjectId} never parses as one of these and the reverse (the old code sees
 * a replicated id as "not ours": NOT_FOUND, or OK for a delete).
 */
public record ReplicatedVolumeId(String random, List<String> tags) {
    public static final int MAX_REPLICAS = 3;
    public static final int MAX_LENGTH = 128;
    private static final String SEPARATOR = "__";
    private static final String TAG = "(?:[a-z0-9](?:[a-z0-9.-]{0,61}[a-z0-9])?|_[a-z2-7]{12})";
    private static final Pattern SHAPE = Pattern.compile(
            "vol-([a-z2-7]{16})-(" + TAG + "(?:" + SEPARATOR + TAG + "){1," + (MAX_REPLICAS - 1) + "})");

    public ReplicatedVolumeId {
        tags = List.copyOf(tags);
        if (tags.size() < 2 || tags.size() > MAX_REPLICAS) {
            throw new IllegalArgumentException("a replicated volume has 2 to " + MAX_REPLICAS + " replicas: " + tags);
        }
        if (new HashSet<>(tags).size() != tags.size()) throw new IllegalArgumentException("a node twice: " + tags);
        for (String tag : tags) {
            if (!ObjectId.isNodeTag(tag)) throw new IllegalArgumentException("bad node tag: " + tag);
        }
        new ObjectId(ObjectId.Kind.VOLUME, random, tags.getFirst());      // checks the random part
    }

    /** A new id for replicas on these distinct nodes, the first primary's first. */
    public static ReplicatedVolumeId generate(List<String> nodeIds) {
        if (new HashSet<>(nodeIds).size() != nodeIds.size()) {
            throw new IllegalArgumentException("replicas need distinct nodes: " + nodeIds);
        }
        String random = ObjectId.generate(ObjectId.Kind.VOLUME, "x").random();
        var tags = new ArrayList<String>();
        for (String node : nodeIds) tags.add(ObjectId.nodeTag(node));
        while (length(random, tags) > MAX_LENGTH) {
            int longest = 0;
            for (int i = 1; i < tags.size(); i++) if (tags.get(i).length() > tags.get(longest).length()) longest = i;
            tags.set(longest, ObjectId.hashedTag(nodeIds.get(longest)));
        }
        return new ReplicatedVolumeId(random, tags);
    }

    /** Parses an id of this shape; empty for anything else (an ordinary volume id, hostile input). */
    public static Optional<ReplicatedVolumeId> parse(String text) {
        if (text == null || text.length() > MAX_LENGTH) return Optional.empty();
        var m = SHAPE.matcher(text);
        if (!m.matches()) return Optional.empty();
        try {
            return Optional.of(new ReplicatedVolumeId(m.group(1), List.of(m.group(2).split(SEPARATOR))));
        } catch (IllegalArgumentException duplicate) {
            return Optional.empty();
        }
    }

    /**
     * An SQL GLOB pattern every id of this shape matches: a database's coarse filter (an ordinary id has no
     * {@code __}); not every match is one, {@link #isReplicated} decides.
     */
    public static final String GLOB = "vol-*" + SEPARATOR + "*";

    /** True when the string has this shape (a router's quick test before it asks the replicas). */
    public static boolean isReplicated(String text) {
        return parse(text).isPresent();
    }

    /** Which replica (0 = the node of the first primary) this node holds, or -1 if none. */
    public int replicaIndex(String nodeId) {
        String plain = ObjectId.nodeTag(nodeId);
        String hashed = ObjectId.hashedTag(nodeId);
        for (int i = 0; i < tags.size(); i++) {
            if (tags.get(i).equals(plain) || tags.get(i).equals(hashed)) return i;
        }
        return -1;
    }

    public boolean heldBy(String nodeId) {
        return replicaIndex(nodeId) >= 0;
    }

    public int replicas() {
        return tags.size();
    }

    @Override
    public String toString() {
        return "vol-" + random + "-" + String.join(SEPARATOR, tags);
    }

    private static int length(String random, List<String> tags) {
        return "vol-".length() + random.length() + 1 + String.join(SEPARATOR, tags).length();
    }
}
