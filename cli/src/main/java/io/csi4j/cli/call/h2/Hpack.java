package io.csi4j.cli.call.h2;

import java.util.Arrays;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * HPACK (RFC 7541) for one connection: the decoder of the peer's header blocks, with the static and dynamic tables,
 * and an encoder that writes every field as a literal without indexing and without Huffman (section 6.2.2), which
 * leaves the peer's decoder state untouched. Header names and values are kept as ISO-8859-1 strings: octet for char.
 */
final class Hpack {
    /** A decoded field. */
    record Field(String name, String value) {}

    /** Appendix A, index 1 to 61. */
    private static final String[][] STATIC = {
            {":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"}, {":path", "/index.html"},
            {":scheme", "http"}, {":scheme", "https"}, {":status", "200"}, {":status", "204"}, {":status", "206"},
            {":status", "304"}, {":status", "400"}, {":status", "404"}, {":status", "500"}, {"accept-charset", ""},
            {"accept-encoding", "gzip, deflate"}, {"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""},
            {"access-control-allow-origin", ""}, {"age", ""}, {"allow", ""}, {"authorization", ""}, {"cache-control", ""},
            {"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""}, {"content-length", ""},
            {"content-location", ""}, {"content-range", ""}, {"content-type", ""}, {"cookie", ""}, {"date", ""},
            {"etag", ""}, {"expect", ""}, {"expires", ""}, {"from", ""}, {"host", ""}, {"if-match", ""},
            {"if-modified-since", ""}, {"if-none-match", ""}, {"if-range", ""}, {"if-unmodified-since", ""},
            {"last-modified", ""}, {"link", ""}, {"location", ""}, {"max-forwards", ""}, {"proxy-authenticate", ""},
            {"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""}, {"retry-after", ""},
            {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""}, {"transfer-encoding", ""},
            {"user-agent", ""}, {"vary", ""}, {"via", ""}, {"www-authenticate", ""}};

    /** SETTINGS_HEADER_TABLE_SIZE: we never send another, so the peer's encoder may use up to the default. */
    static final int TABLE_LIMIT = 4096;

    /** The dynamic table, newest first (index 62 is its first entry). */
    private final ArrayDeque<Field> dynamic = new ArrayDeque<>();
    private int size;
    private int maxSize = TABLE_LIMIT;

    /** Decodes one complete header block (a HEADERS frame's fragment and its CONTINUATIONs, padding removed). */
    List<Field> decode(byte[] block) {
        var fields = new ArrayList<Field>();
        var in = new Reader(block);
        boolean fieldSeen = false;
        while (in.more()) {
            int b = in.peek();
            if ((b & 0x80) != 0) {                       // indexed field (6.1)
                fields.add(entry(in.integer(7)));
                fieldSeen = true;
            } else if ((b & 0xc0) == 0x40) {             // literal with incremental indexing (6.2.1)
                var field = literal(in, 6);
                add(field);
                fields.add(field);
                fieldSeen = true;
            } else if ((b & 0xe0) == 0x20) {             // dynamic table size update (6.3): only before the first field
                if (fieldSeen) throw new HpackException("table size update after a header field");
                int newSize = in.integer(5);
                if (newSize > TABLE_LIMIT) throw new HpackException("table size " + newSize + " over " + TABLE_LIMIT);
                maxSize = newSize;
                evict(0);
            } else {                                     // literal without indexing / never indexed (6.2.2, 6.2.3)
                fields.add(literal(in, 4));
                fieldSeen = true;
            }
        }
        return fields;
    }

    private Field literal(Reader in, int prefix) {
        int index = in.integer(prefix);
        String name = index == 0 ? in.string() : entry(index).name();
        return new Field(name, in.string());
    }

    private Field entry(int index) {
        if (index <= 0) throw new HpackException("header index 0");
        if (index <= STATIC.length) return new Field(STATIC[index - 1][0], STATIC[index - 1][1]);
        int at = index - STATIC.length - 1;
        if (at >= dynamic.size()) throw new HpackException("header index " + index + " beyond the tables");
        var it = dynamic.iterator();
        for (int i = 0; i < at; i++) it.next();
        return it.next();
    }

    private void add(Field field) {
        int entrySize = entrySize(field);
        evict(entrySize);
        // an entry larger than the table empties it and is not added (4.4)
        if (entrySize <= maxSize) {
            dynamic.addFirst(field);
            size += entrySize;
        }
    }

    private void evict(int room) {
        while (!dynamic.isEmpty() && size + room > maxSize) size -= entrySize(dynamic.removeLast());
    }

    /** 4.1: octets of name and value plus 32. */
    private static int entrySize(Field field) {
        return field.name().length() + field.value().length() + 32;
    }

    /** One header block of literal fields without indexing, new names, raw strings. */
    static byte[] encode(List<Map.Entry<String, String>> fields) {
        var out = new ByteArrayOutputStream();
        for (var field : fields) {
            out.write(0x00);
            writeString(out, field.getKey());
            writeString(out, field.getValue());
        }
        return out.toByteArray();
    }

    private static void writeString(ByteArrayOutputStream out, String s) {
        byte[] octets = s.getBytes(StandardCharsets.ISO_8859_1);
        writeInteger(out, 0x00, 7, octets.length);
        out.writeBytes(octets);
    }

    /** 5.1: {@code value} with an N-bit prefix; {@code high} holds the first octet's bits above the prefix. */
    static void writeInteger(ByteArrayOutputStream out, int high, int prefix, int value) {
        int max = (1 << prefix) - 1;
        if (value < max) {
            out.write(high | value);
            return;
        }
        out.write(high | max);
        value -= max;
        while (value >= 0x80) {
            out.write((value & 0x7f) | 0x80);
            value >>>= 7;
        }
        out.write(value);
    }

    /** Reads integers and strings from a header block. */
    private static final class Reader {
        private final byte[] in;
        private int at;

        Reader(byte[] in) {
            this.in = in;
        }

        boolean more() {
            return at < in.length;
        }

        int peek() {
            return in[at] & 0xff;
        }

        private int next() {
            if (at >= in.length) throw new HpackException("header block ends inside a field");
            return in[at++] & 0xff;
        }

        /** 5.1; the octet's bits above the prefix are the caller's. */
        int integer(int prefix) {
            int max = (1 << prefix) - 1;
            int value = next() & max;
            if (value < max) return value;
            int shift = 0;
            int b;
            do {
                b = next();
                if (shift > 21) throw new HpackException("integer too large");
                value += (b & 0x7f) << shift;
                shift += 7;
            } while ((b & 0x80) != 0);
            if (value < 0) throw new HpackException("integer too large");
            return value;
        }

        /** 5.2: H flag, length, octets (Huffman decoded when H is set). */
        String string() {
            if (at >= in.length) throw new HpackException("header block ends inside a field");
            boolean huffman = (in[at] & 0x80) != 0;
            int length = integer(7);
            if (length > in.length - at) throw new HpackException("string longer than its header block");
            byte[] octets = huffman ? Huffman.decode(in, at, length) : Arrays.copyOfRange(in, at, at + length);
            at += length;
            return new String(octets, StandardCharsets.ISO_8859_1);
        }
    }
}
