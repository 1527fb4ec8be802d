package io.csi4j.driver.cluster;

import io.csi4j.sdk.CsiException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The page token of a list merged across nodes. Nodes are listed one after the other in node-id order, so
 * every node's cursor is known from two things: the node being listed (before it: done; after it: not
 * started) and that node's own next_token. Both are sealed with an HMAC bound to the list kind and filter,
 * as {@link io.csi4j.sdk.paging.PageTokens} does: an altered token, or one of another list, is ABORTED.
 *
 * <p>Why not a map of every node's token: the spec's 128-byte limit on strings. This one is 70 bytes
 * (94 characters) with csi4j agents' 44-character tokens, whatever the number of nodes.
 */
public final class ClusterPageToken {
    private static final byte VERSION = 1;
    private static final int NODE_KEY_BYTES = 8;
    private static final int MAC_BYTES = 16;
    private static final String ALGORITHM = "HmacSHA256";

    /** Where a listing goes on: at node {@code nodeKey} (see {@link #nodeKey}), with that node's own token. */
    public record Position(byte[] nodeKey, String nodeToken) {
        public boolean at(String nodeId) {
            return Arrays.equals(nodeKey, ClusterPageToken.nodeKey(nodeId));
        }
    }

    private final SecretKeySpec key;

    public ClusterPageToken(byte[] key) {
        if (key.length < 16) throw new IllegalArgumentException("page token key needs at least 16 bytes");
        this.key = new SecretKeySpec(key.clone(), ALGORITHM);
    }

    public static ClusterPageToken withRandomKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return new ClusterPageToken(key);
    }

    public String encode(String listKind, String filter, String nodeId, String nodeToken) {
        byte[] cursor = nodeToken.getBytes(StandardCharsets.UTF_8);
        if (cursor.length > 255) throw new IllegalStateException("a node's page token is longer than 255 bytes");
        ByteBuffer body = ByteBuffer.allocate(1 + NODE_KEY_BYTES + 1 + cursor.length);
        body.put(VERSION).put(nodeKey(nodeId)).put((byte) cursor.length).put(cursor);
        byte[] token = Arrays.copyOf(body.array(), body.capacity() + MAC_BYTES);
        System.arraycopy(mac(listKind, filter, body.array()), 0, token, body.capacity(), MAC_BYTES);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(token);
    }

    /** The position in {@code token}; null for an empty token (the start). ABORTED for anything we did not issue. */
    public Position decode(String listKind, String filter, String token) {
        if (token == null || token.isEmpty()) return null;
        byte[] raw;
        try {
            raw = Base64.getUrlDecoder().decode(token);
        } catch (IllegalArgumentException e) {
            throw invalid(listKind, "not a token issued by this controller");
        }
        if (raw.length < 1 + NODE_KEY_BYTES + 1 + MAC_BYTES || raw[0] != VERSION) throw invalid(listKind, "not a token issued by this controller");
        int cursorLength = raw[1 + NODE_KEY_BYTES] & 0xff;
        int bodyLength = 1 + NODE_KEY_BYTES + 1 + cursorLength;
        if (raw.length != bodyLength + MAC_BYTES) throw invalid(listKind, "not a token issued by this controller");
        byte[] body = Arrays.copyOf(raw, bodyLength);
        byte[] expected = Arrays.copyOf(mac(listKind, filter, body), MAC_BYTES);
        if (!MessageDigest.isEqual(expected, Arrays.copyOfRange(raw, bodyLength, raw.length))) {
            throw invalid(listKind, "it was altered, issued for another list or filter, or signed with another key");
        }
        return new Position(Arrays.copyOfRange(raw, 1, 1 + NODE_KEY_BYTES),
                new String(raw, bodyLength - cursorLength, cursorLength, StandardCharsets.UTF_8));
    }

    /** A node's short key in a token: the first bytes of SHA-256 of its id. */
    static byte[] nodeKey(String nodeId) {
        try {
            return Arrays.copyOf(MessageDigest.getInstance("SHA-256").digest(nodeId.getBytes(StandardCharsets.UTF_8)), NODE_KEY_BYTES);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private byte[] mac(String listKind, String filter, byte[] body) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            mac.update(listKind.getBytes(StandardCharsets.UTF_8));
            mac.update((byte) 0);
            mac.update(filter.getBytes(StandardCharsets.UTF_8));
            mac.update((byte) 0);
            mac.update(body);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static CsiException invalid(String listKind, String why) {
        return CsiException.aborted("starting_token is not valid for this " + listKind + " list: " + why);
    }
}
