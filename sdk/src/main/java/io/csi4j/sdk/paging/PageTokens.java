package io.csi4j.sdk.paging;

import io.csi4j.sdk.CsiException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Objects;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Opaque {@code next_token}/{@code starting_token} values for List RPCs: a position in a list, bound by an
 * HMAC to the kind of list and to the filter it was issued for. A token that was altered, issued for another
 * list or filter, or signed with another key is refused with ABORTED, which is what the spec prescribes for
 * an invalid {@code starting_token}.
 *
 * <p>The key comes from the caller so tokens survive a plugin restart when the key is persisted (a token
 * held by a CO across a restart then still works). Tokens are URL-safe base64, well under the spec's
 * 128-byte string limit for short kinds: {@code 1 + 1 + kind + 8 + 16} bytes before encoding.
 */
public final class PageTokens {
    private static final byte VERSION = 1;
    private static final int MAC_BYTES = 16;
    private static final int MAX_KIND_BYTES = 32;
    private static final String ALGORITHM = "HmacSHA256";

    private final SecretKeySpec key;

    /** {@code key} must have at least 16 bytes; it is copied. */
    public PageTokens(byte[] key) {
        if (key.length < 16) throw new IllegalArgumentException("page token key needs at least 16 bytes");
        this.key = new SecretKeySpec(key.clone(), ALGORITHM);
    }

    /** Tokens valid for the life of this process only. */
    public static PageTokens withRandomKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return new PageTokens(key);
    }

    /** A short stable digest of the filter values a list was asked for (e.g. source_volume_id, snapshot_id). */
    public static String fingerprint(String... filterValues) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            for (String value : filterValues) {
                byte[] b = (value == null ? "" : value).getBytes(StandardCharsets.UTF_8);
                digest.update(ByteBuffer.allocate(4).putInt(b.length).array());
                digest.update(b);
            }
            return HexFormat.of().formatHex(digest.digest(), 0, 12);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A token meaning "continue {@code listKind} filtered by {@code filterFingerprint} at {@code position}". */
    public String encode(String listKind, String filterFingerprint, long position) {
        byte[] kind = kindBytes(listKind);
        if (position < 0) throw new IllegalArgumentException("negative position");
        ByteBuffer body = ByteBuffer.allocate(2 + kind.length + 8);
        body.put(VERSION).put((byte) kind.length).put(kind).putLong(position);
        byte[] mac = mac(body.array(), filterFingerprint);
        byte[] token = Arrays.copyOf(body.array(), body.capacity() + MAC_BYTES);
        System.arraycopy(mac, 0, token, body.capacity(), MAC_BYTES);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(token);
    }

    /**
     * The position in {@code token}, which must have been issued by {@link #encode} with the same key, list
     * kind and filter. An empty token means the start of the list (position 0).
     *
     * @throws CsiException ABORTED for a token that is malformed, altered or not meant for this list
     */
    public long decode(String listKind, String filterFingerprint, String token) {
        byte[] expectedKind = kindBytes(listKind);
        if (token == null || token.isEmpty()) return 0;
        byte[] raw;
        try {
            raw = Base64.getUrlDecoder().decode(token);
        } catch (IllegalArgumentException e) {
            throw invalid(listKind, "not a token issued by this plugin");
        }
        if (raw.length < 2 + 8 + MAC_BYTES || raw[0] != VERSION) throw invalid(listKind, "not a token issued by this plugin");
        int kindLength = raw[1] & 0xff;
        int bodyLength = 2 + kindLength + 8;
        if (raw.length != bodyLength + MAC_BYTES) throw invalid(listKind, "not a token issued by this plugin");
        byte[] body = Arrays.copyOf(raw, bodyLength);
        byte[] mac = mac(body, filterFingerprint);
        if (!MessageDigest.isEqual(Arrays.copyOf(mac, MAC_BYTES), Arrays.copyOfRange(raw, bodyLength, raw.length))) {
            throw invalid(listKind, "it was altered, issued for a different filter, or signed with another key");
        }
        byte[] kind = Arrays.copyOfRange(raw, 2, 2 + kindLength);
        if (!Arrays.equals(kind, expectedKind)) {
            throw invalid(listKind, "it was issued for a " + new String(kind, StandardCharsets.UTF_8) + " list");
        }
        long position = ByteBuffer.wrap(raw, 2 + kindLength, 8).getLong();
        if (position < 0) throw invalid(listKind, "negative position");
        return position;
    }

    private byte[] mac(byte[] body, String filterFingerprint) {
        Objects.requireNonNull(filterFingerprint, "filterFingerprint");
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            mac.update(body);
            mac.update((byte) 0);
            mac.update(filterFingerprint.getBytes(StandardCharsets.UTF_8));
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] kindBytes(String listKind) {
        byte[] kind = listKind.getBytes(StandardCharsets.UTF_8);
        if (kind.length == 0 || kind.length > MAX_KIND_BYTES) {
            throw new IllegalArgumentException("list kind must have 1.." + MAX_KIND_BYTES + " bytes");
        }
        return kind;
    }

    private static CsiException invalid(String listKind, String why) {
        return CsiException.aborted("starting_token is not valid for this " + listKind + " list: " + why);
    }
}
