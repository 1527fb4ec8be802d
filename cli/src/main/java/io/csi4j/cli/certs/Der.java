package io.csi4j.cli.certs;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/**
 * The few ASN.1 DER encodings an X.509 v3 certificate needs (RFC 5280, X.690): each method returns one
 * complete tag-length-value. The JDK parses and verifies certificates but has no public API to write one;
 * this keeps {@code csi4j certs} free of a cryptography library in the image.
 */
final class Der {
    private Der() {}

    static byte[] sequence(byte[]... parts) {
        return tlv(0x30, concat(parts));
    }

    static byte[] set(byte[]... parts) {
        return tlv(0x31, concat(parts));
    }

    static byte[] integer(BigInteger value) {
        return tlv(0x02, value.toByteArray());  // two's complement, minimal: what DER asks for
    }

    static byte[] bool(boolean value) {
        return tlv(0x01, new byte[] {(byte) (value ? 0xff : 0x00)});
    }

    static byte[] octetString(byte[] value) {
        return tlv(0x04, value);
    }

    /** A BIT STRING of whole bytes (a signature, a key). */
    static byte[] bitString(byte[] value) {
        return tlv(0x03, concat(new byte[] {0}, value));
    }

    /** A named-bit BIT STRING (KeyUsage): trailing zero bits are not encoded, as DER requires. */
    static byte[] namedBits(int firstByte) {
        if (firstByte == 0) return tlv(0x03, new byte[] {0});
        int unused = Integer.numberOfTrailingZeros(firstByte);
        return tlv(0x03, new byte[] {(byte) unused, (byte) firstByte});
    }

    static byte[] utf8(String value) {
        return tlv(0x0c, value.getBytes(StandardCharsets.UTF_8));
    }

    static byte[] oid(String dotted) {
        String[] arcs = dotted.split("\\.");
        var out = new ByteArrayOutputStream();
        base128(out, new BigInteger(arcs[0]).multiply(BigInteger.valueOf(40)).add(new BigInteger(arcs[1])));
        for (int i = 2; i < arcs.length; i++) base128(out, new BigInteger(arcs[i]));
        return tlv(0x06, out.toByteArray());
    }

    /** RFC 5280 4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050; seconds, Zulu. */
    static byte[] time(ZonedDateTime t) {
        ZonedDateTime utc = t.withZoneSameInstant(ZoneOffset.UTC);
        if (utc.getYear() < 2050) {
            return tlv(0x17, DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'").format(utc).getBytes(StandardCharsets.US_ASCII));
        }
        return tlv(0x18, DateTimeFormatter.ofPattern("yyyyMMddHHmmss'Z'").format(utc).getBytes(StandardCharsets.US_ASCII));
    }

    /** [n] EXPLICIT: a constructed context tag around a complete encoding. */
    static byte[] explicit(int tag, byte[] inner) {
        return tlv(0xa0 | tag, inner);
    }

    /** [n] IMPLICIT primitive (GeneralName's dNSName [2] and iPAddress [7], a key identifier [0]). */
    static byte[] implicitPrimitive(int tag, byte[] content) {
        return tlv(0x80 | tag, content);
    }

    static byte[] tlv(int tag, byte[] content) {
        var out = new ByteArrayOutputStream(content.length + 6);
        out.write(tag);
        int n = content.length;
        if (n < 0x80) {
            out.write(n);
        } else {
            int bytes = (32 - Integer.numberOfLeadingZeros(n) + 7) / 8;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) out.write(n >>> (8 * i));
        }
        out.writeBytes(content);
        return out.toByteArray();
    }

    static byte[] concat(byte[]... parts) {
        var out = new ByteArrayOutputStream();
        for (byte[] p : parts) out.writeBytes(p);
        return out.toByteArray();
    }

    private static void base128(ByteArrayOutputStream out, BigInteger value) {
        int groups = Math.max(1, (value.bitLength() + 6) / 7);
        for (int i = groups - 1; i >= 0; i--) {
            int b = value.shiftRight(7 * i).intValue() & 0x7f;
            out.write(i > 0 ? b | 0x80 : b);
        }
    }
}
