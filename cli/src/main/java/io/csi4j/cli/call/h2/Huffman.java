package io.csi4j.cli.call.h2;

import java.io.ByteArrayOutputStream;

/**
 * The decoder of HPACK's Huffman code (RFC 7541 section 5.2, Appendix B). The code is canonical: codes of one length
 * are consecutive in symbol order, each length's first code follows the previous length's last; so the table is the
 * code length of each of the 257 symbols (256 octets and EOS), and decoding is the textbook canonical walk.
 */
final class Huffman {
    private Huffman() {}

    /** Appendix B's code lengths in bits, symbol 0 to 256 (EOS). */
    private static final byte[] LENGTHS = {
            13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
            6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
            13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
            15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
            20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
            22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
            26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
            20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
            30};
    static final int EOS = 256;
    private static final int MAX = 30;

    /** Per length: the first code, how many codes, where its symbols start in {@link #SYMBOLS}. */
    private static final int[] FIRST = new int[MAX + 2];
    private static final int[] COUNT = new int[MAX + 2];
    private static final int[] OFFSET = new int[MAX + 2];
    /** The symbols ordered by (length, symbol): the order the codes are assigned in. */
    private static final int[] SYMBOLS = new int[LENGTHS.length];

    static {
        for (byte length : LENGTHS) COUNT[length]++;
        int code = 0;
        int offset = 0;
        for (int length = 1; length <= MAX; length++) {
            FIRST[length] = code;
            OFFSET[length] = offset;
            code = (code + COUNT[length]) << 1;
            offset += COUNT[length];
        }
        int[] next = OFFSET.clone();
        for (int length = 1; length <= MAX; length++) {
            for (int symbol = 0; symbol < LENGTHS.length; symbol++) {
                if (LENGTHS[symbol] == length) SYMBOLS[next[length]++] = symbol;
            }
        }
    }

    /** The octets {@code in[from, from + length)} encode; padding must be at most 7 bits, all ones (section 5.2). */
    static byte[] decode(byte[] in, int from, int length) {
        var out = new ByteArrayOutputStream(length * 8 / 5 + 1);
        int code = 0;
        int bits = 0;
        boolean allOnes = true;
        for (int i = from; i < from + length; i++) {
            for (int b = 7; b >= 0; b--) {
                int bit = (in[i] >> b) & 1;
                code = (code << 1) | bit;
                bits++;
                allOnes &= bit == 1;
                int index = code - FIRST[bits];
                if (index >= 0 && index < COUNT[bits]) {
                    int symbol = SYMBOLS[OFFSET[bits] + index];
                    if (symbol == EOS) throw new HpackException("Huffman string holds EOS");
                    out.write(symbol);
                    code = 0;
                    bits = 0;
                    allOnes = true;
                } else if (bits == MAX) {
                    throw new HpackException("invalid Huffman code");
                }
            }
        }
        if (bits > 7 || !allOnes) throw new HpackException("invalid Huffman padding");
        return out.toByteArray();
    }
}
