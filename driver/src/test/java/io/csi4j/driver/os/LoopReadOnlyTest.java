package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A fenced block volume's loop device refuses writes (BLKROSET), and no later attachment of its number inherits that. */
class LoopReadOnlyTest {
    @TempDir
    Path dir;

    @BeforeEach
    void root() {
        Privileged.requireRoot();
    }

    @AfterEach
    void cleanUp() {
        for (LoopDevice d : LoopDevice.list()) {
            if (d.backingFile().startsWith(dir)) d.detach();
        }
    }

    private Path image(String name) throws IOException {
        Path image = dir.resolve(name);
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(8L << 20);
        }
        return image.toRealPath();
    }

    private static int write(FileChannel channel, long at) throws IOException {
        return channel.write(ByteBuffer.wrap(new byte[4096]), at);
    }

    private static String sysRo(int number) throws IOException {
        return Files.readString(Path.of("/sys/block/loop" + number + "/ro")).strip();
    }

    @Test
    void aWriterHoldingTheDeviceOpenIsRefusedAndADetachClearsTheFlag() throws Exception {
        Path file = image("fenced.img");
        LoopDevice device;
        try (AttachedLoop loop = LoopDevice.attach(file, EnumSet.noneOf(LoopFlag.class))) {
            device = loop.device();
        }
        try (FileChannel writer = FileChannel.open(device.node(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            assertEquals(4096, write(writer, 0));
            assertTrue(device.refuseWrites());
            IOException refused = assertThrows(IOException.class, () -> write(writer, 4096));
            assertTrue(refused.getMessage().contains("Operation not permitted"), refused.getMessage());
            assertTrue(LoopDevice.find(device.number()).orElseThrow().readOnly());
            assertThrows(IOException.class, () -> write(writer, 0));      // every later write, not only the next
        }
        assertTrue(device.detach());
        // free now: the device's flag was cleared for whoever attaches this number next (unless already reused)
        if (LoopDevice.find(device.number()).isEmpty()) assertEquals("0", sysRo(device.number()));
    }

    /**
     * The kernel keeps BLKROSET past an autoclear detach at the last close (nothing of ours runs then): the next
     * attach of that number must make it writable. The lowest free number is handed out, so attaching again lands
     * on it unless another process on this machine took it meanwhile (then its own attach is what matters).
     */
    @Test
    void aFreshAttachOfAReadOnlyLeftNumberIsWritable() throws Exception {
        Path first = image("first.img");
        int number;
        try (AttachedLoop loop = LoopDevice.attach(first, EnumSet.of(LoopFlag.AUTOCLEAR))) {
            number = loop.device().number();
            assertTrue(loop.device().refuseWrites());
        }
        for (int i = 0; i < 200 && LoopDevice.find(number).filter(d -> d.backingFile().equals(first)).isPresent(); i++) {
            Thread.sleep(10);
        }
        Optional<LoopDevice> left = LoopDevice.find(number);
        if (left.isEmpty()) assertEquals("1", sysRo(number), "the flag outlives the detach (the reason for the clear)");

        List<AttachedLoop> attached = new ArrayList<>();
        boolean landed = false;
        try {
            for (int i = 0; i < 8 && !landed; i++) {
                AttachedLoop loop = LoopDevice.attach(image("next" + i + ".img"), EnumSet.noneOf(LoopFlag.class));
                attached.add(loop);
                landed = loop.device().number() == number;
                assertFalse(LoopDevice.find(loop.device().number()).orElseThrow().readOnly(), loop.node() + " attached read-only");
                try (FileChannel writer = FileChannel.open(loop.node(), StandardOpenOption.WRITE)) {
                    assertEquals(4096, write(writer, 0));
                }
            }
            if (!landed) {
                LoopDevice other = LoopDevice.find(number).orElseThrow(() -> new AssertionError("loop" + number + " free but not handed out"));
                assertFalse(other.backingFile().startsWith(dir), "taken by another process: " + other);
            }
        } finally {
            for (AttachedLoop loop : attached) {
                loop.close();
                loop.device().detach();
            }
        }
    }

    @Test
    void aReadOnlyAttachmentStaysReadOnly() throws Exception {
        try (AttachedLoop loop = LoopDevice.attach(image("ro.img"), EnumSet.of(LoopFlag.READ_ONLY))) {
            assertTrue(LoopDevice.find(loop.device().number()).orElseThrow().readOnly());
            try (FileChannel writer = FileChannel.open(loop.node(), StandardOpenOption.WRITE)) {
                assertThrows(IOException.class, () -> write(writer, 0));
            } catch (IOException openRefused) {
                // EROFS at open is as good
            }
            loop.device().detach();
        }
    }
}
