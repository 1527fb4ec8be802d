package io.csi4j.driver.engine.image;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.os.Fallocate;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The round journal's format (docs/inplace-rounds.md 1.2): what is written reads back whole; a journal cut short or with
 * one byte flipped anywhere is refused whole; applying it is idempotent (twice equals once, a half apply then a whole
 * one equals one), a hole punched over data and data written over a hole included. Real files.
 */
class RoundJournalTest {
    private static final int SIZE = 1 << 20;
    private static final RoundJournal.Header HEADER = new RoundJournal.Header("vol-1", "point-a", "point-b", SIZE);

    @TempDir
    Path dir;

    /** Data over data, a hole punched over data, data written into a hole, a write over an earlier one, a short range. */
    private Path journal(Random random) throws Exception {
        Path file = dir.resolve("j" + random.nextInt(1 << 20));
        try (var w = new RoundJournal.Writer(file, HEADER)) {
            w.data(ByteBuffer.wrap(bytes(random, 65536)), 0);
            w.zero(65536, 131072);                        // over data
            w.data(ByteBuffer.wrap(bytes(random, 65536)), 4L * 65536);   // into the hole the image has there
            w.data(ByteBuffer.wrap(bytes(random, 100)), 10);            // over the first range: the later wins
            w.zero(8L * 65536, 65536);
            w.data(ByteBuffer.wrap(bytes(random, 65536)), 8L * 65536);   // data over the hole just punched
            w.finish();
        }
        return file;
    }

    private static byte[] bytes(Random random, int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** An image of data everywhere but a hole at 4 x 64 KiB. */
    private Path image(String name) throws Exception {
        Path file = dir.resolve(name);
        byte[] data = new byte[SIZE];
        Arrays.fill(data, (byte) 0x5A);
        Files.write(file, data);
        Fallocate.punchHole(file, 4L * 65536, 65536);
        return file;
    }

    @Test
    void whatIsWrittenReadsBackWhole() throws Exception {
        Path file = journal(new Random(1));
        RoundJournal.Contents c = RoundJournal.read(file);
        assertEquals(HEADER, c.header());
        assertEquals(6, c.entries().size());
        assertEquals(65536 * 3 + 100, c.dataBytes());
        assertEquals(List.of(false, true, false, false, true, false), c.entries().stream().map(RoundJournal.Entry::zero).toList());
    }

    @Test
    void aJournalCutShortOrWithAFlippedByteIsRefused() throws Exception {
        Path good = journal(new Random(2));
        byte[] bytes = Files.readAllBytes(good);
        // every length short of whole, sampled, and the trailer's last byte missing
        for (int length : new int[] {0, 5, 30, 60, 61, 200, bytes.length / 2, bytes.length - 22, bytes.length - 1}) {
            Path cut = dir.resolve("cut-" + length);
            Files.write(cut, Arrays.copyOf(bytes, length));
            assertThrows(RoundJournal.Corrupt.class, () -> RoundJournal.read(cut), "cut at " + length);
        }
        // one flipped bit at any offset: header, record fields, data, trailer
        Random random = new Random(3);
        for (int i = 0; i < 200; i++) {
            int at = i < 100 ? i : random.nextInt(bytes.length);
            byte[] flipped = bytes.clone();
            flipped[at] ^= (byte) (1 << random.nextInt(8));
            Path bad = dir.resolve("flip");
            Files.write(bad, flipped);
            assertThrows(RoundJournal.Corrupt.class, () -> RoundJournal.read(bad), "bit flipped at " + at);
        }
        // something after the trailer
        Path longer = dir.resolve("longer");
        Files.write(longer, Arrays.copyOf(bytes, bytes.length + 1));
        assertThrows(RoundJournal.Corrupt.class, () -> RoundJournal.read(longer));
    }

    @Test
    void applyingIsIdempotent() throws Exception {
        Path file = journal(new Random(4));
        RoundJournal.Contents c = RoundJournal.read(file);
        Path once = image("once");
        RoundJournal.apply(file, c, once, record -> { });
        byte[] expected = Files.readAllBytes(once);
        assertTrue(expected[65536 + 5] == 0 && expected[5 * 65536 - 1] != 0x5A, "the hole punched, the hole filled");

        Path twice = image("twice");
        RoundJournal.apply(file, c, twice, record -> { });
        RoundJournal.apply(file, c, twice, record -> { });
        assertArrayEquals(expected, Files.readAllBytes(twice));

        // stopped half-way (a crash in A2), then applied whole: the same
        for (int stop = 0; stop <= c.entries().size(); stop++) {
            Path half = image("half-" + stop);
            int at = stop;
            try {
                RoundJournal.apply(file, c, half, record -> {
                    if (record == at) throw new IllegalStateException("stopped");
                });
            } catch (IllegalStateException stopped) {
                // the records before it are in the image
            }
            RoundJournal.apply(file, c, half, record -> { });
            assertArrayEquals(expected, Files.readAllBytes(half), "stopped before record " + stop);
        }
        // and a range written twice over a torn image (half of a record's bytes from some other write) ends as the journal says
        Path torn = image("torn");
        try (RandomAccessFile f = new RandomAccessFile(torn.toFile(), "rw")) {
            f.seek(8L * 65536 + 1000);
            f.write(new byte[3000]);
        }
        RoundJournal.apply(file, c, torn, record -> { });
        assertArrayEquals(expected, Files.readAllBytes(torn));
    }
}
