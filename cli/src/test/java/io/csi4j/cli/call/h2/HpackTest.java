package io.csi4j.cli.call.h2;

import static org.junit.jupiter.api.Assertions.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersEncoder;
import io.netty.util.AsciiString;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The decoder against Netty's HPACK encoder (what grpc-java's server writes with): Huffman strings holding every octet,
 * the dynamic table across blocks, table size updates; and blocks that break RFC 7541 refused.
 */
class HpackTest {
    private final DefaultHttp2HeadersEncoder netty = new DefaultHttp2HeadersEncoder();
    private final Hpack hpack = new Hpack();

    private List<Hpack.Field> roundTrip(DefaultHttp2Headers headers) throws Exception {
        ByteBuf buf = Unpooled.buffer();
        netty.encodeHeaders(1, headers, buf);
        byte[] block = new byte[buf.readableBytes()];
        buf.readBytes(block);
        return hpack.decode(block);
    }

    private static DefaultHttp2Headers headers(String... nameValue) {
        var h = new DefaultHttp2Headers(false);
        for (int i = 0; i < nameValue.length; i += 2) h.add(new AsciiString(nameValue[i]), latin1(nameValue[i + 1]));
        return h;
    }

    private static AsciiString latin1(String s) {
        return new AsciiString(s.getBytes(StandardCharsets.ISO_8859_1));
    }

    private static List<Hpack.Field> fields(String... nameValue) {
        var out = new ArrayList<Hpack.Field>();
        for (int i = 0; i < nameValue.length; i += 2) out.add(new Hpack.Field(nameValue[i], nameValue[i + 1]));
        return out;
    }

    @Test
    void everyOctetThroughHuffmanStrings() throws Exception {
        // a long run of 5-bit symbols makes the encoder choose Huffman even around a 30-bit one
        String common = "a".repeat(64);
        for (int octet = 0; octet < 256; octet++) {
            String value = common + (char) octet + common;
            assertEquals(fields("x-value", value), roundTrip(headers("x-value", value)), "octet " + octet);
        }
        // and all of them in one string
        var all = new StringBuilder(common.repeat(40));
        for (int octet = 0; octet < 256; octet++) all.append((char) octet);
        assertEquals(fields("x-all", all.toString()), roundTrip(headers("x-all", all.toString())));
    }

    @Test
    void aResponseAndItsTrailersTwiceThroughTheDynamicTable() throws Exception {
        for (int round = 0; round < 3; round++) {
            assertEquals(fields(":status", "200", "content-type", "application/grpc", "grpc-encoding", "identity"),
                    roundTrip(headers(":status", "200", "content-type", "application/grpc", "grpc-encoding", "identity")));
            assertEquals(fields("grpc-status", "5", "grpc-message", "volume x does not exist " + round),
                    roundTrip(headers("grpc-status", "5", "grpc-message", "volume x does not exist " + round)));
        }
    }

    @Test
    void tableSizeUpdatesEvictAndLargeEntriesDoNotStick() throws Exception {
        netty.configuration().maxHeaderTableSize(64);
        String big = "v".repeat(200);
        for (int round = 0; round < 3; round++) {
            assertEquals(fields("x-big", big, "x-small", "s" + round), roundTrip(headers("x-big", big, "x-small", "s" + round)));
        }
        netty.configuration().maxHeaderTableSize(0);
        assertEquals(fields("x-a", "1"), roundTrip(headers("x-a", "1")));
        netty.configuration().maxHeaderTableSize(4096);
        for (int round = 0; round < 3; round++) assertEquals(fields("x-a", "1", "x-b", big), roundTrip(headers("x-a", "1", "x-b", big)));
    }

    @Test
    void integersOverSeveralOctetsAndOurOwnEncoding() {
        var out = new ByteArrayOutputStream();
        Hpack.writeInteger(out, 0, 5, 1337);                     // RFC 7541 C.1.2
        assertArrayEquals(new byte[] {31, (byte) 0x9a, 0x0a}, out.toByteArray());
        String longValue = "x".repeat(300);
        byte[] block = Hpack.encode(List.of(Map.entry(":path", "/csi.v1.Identity/Probe"), Map.entry("x-long", longValue)));
        assertEquals(fields(":path", "/csi.v1.Identity/Probe", "x-long", longValue), new Hpack().decode(block));
    }

    @Test
    void theRfcsHuffmanExample() {
        // RFC 7541 C.4.1: "www.example.com" as a Huffman string, literal with indexing of :authority
        byte[] block = hex("418cf1e3c2e5f23a6ba0ab90f4ff");
        assertEquals(fields(":authority", "www.example.com"), hpack.decode(block));
        // the next block of C.4.2 refers to it by index 62
        assertEquals(fields(":method", "GET", ":scheme", "http", ":path", "/", ":authority", "www.example.com",
                "cache-control", "no-cache"), hpack.decode(hex("828684be5886a8eb10649cbf")));
    }

    @Test
    void brokenBlocksAreRefused() {
        assertThrows(HpackException.class, () -> new Hpack().decode(new byte[] {(byte) 0x80}));              // index 0
        assertThrows(HpackException.class, () -> new Hpack().decode(new byte[] {(byte) 0xbe}));              // 62: empty table
        assertThrows(HpackException.class, () -> new Hpack().decode(new byte[] {0x00, 0x05, 'a'}));          // string past the end
        assertThrows(HpackException.class, () -> new Hpack().decode(new byte[] {0x3f, (byte) 0xe2, 0x1f}));  // size update to 4097
        assertThrows(HpackException.class, () -> new Hpack().decode(new byte[] {(byte) 0x82, 0x20}));        // size update after a field
        // Huffman: padding of zeros, padding of 8 bits, EOS inside
        assertThrows(HpackException.class, () -> Huffman.decode(new byte[] {0x00}, 0, 1));
        assertThrows(HpackException.class, () -> Huffman.decode(new byte[] {0x1f, (byte) 0xff}, 0, 2));
        assertThrows(HpackException.class, () -> Huffman.decode(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff}, 0, 4));
    }

    private static byte[] hex(String s) {
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }
}
