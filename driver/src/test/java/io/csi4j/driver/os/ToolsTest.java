package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import io.csi4j.driver.testing.ScratchFilesystem;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ToolsTest {

    @Test
    void failureMessageCarriesStderr(@TempDir Path dir) {
        Path missing = dir.resolve("no-such-device");
        ToolException e = assertThrows(ToolException.class, () -> Tools.resize2fs(missing));
        assertEquals(ToolException.Reason.FAILED, e.reason());
        assertTrue(e.exitCode() > 0);
        assertTrue(e.stderr().contains("No such file or directory"), e.stderr());
        assertTrue(e.getMessage().contains("resize2fs " + missing + "` exited with " + e.exitCode()), e.getMessage());
        assertTrue(e.getMessage().endsWith(e.stderr().strip()), "the whole (short) stderr is in the message");
    }

    @Test
    void stdoutTailIsInTheMessageToo() {
        ToolException e = assertThrows(ToolException.class,
                () -> Tools.run(Duration.ofSeconds(10), "sh", List.of("-c", "echo progress; echo broken >&2; exit 3")));
        assertEquals(3, e.exitCode());
        assertTrue(e.getMessage().endsWith("exited with 3: broken (stdout: progress)"), e.getMessage());
    }

    @Test
    void missingToolNamesItsPackage(@TempDir Path emptyPath) {
        ToolException e = assertThrows(ToolException.class, () -> Tools.locate("mkfs.xfs", List.of(emptyPath)));
        assertEquals(ToolException.Reason.NOT_FOUND, e.reason());
        assertTrue(e.getMessage().contains("mkfs.xfs not found"), e.getMessage());
        assertTrue(e.getMessage().contains("install the package xfsprogs"), e.getMessage());
        assertTrue(assertThrows(ToolException.class, () -> Tools.locate("mkfs.btrfs", List.of(emptyPath)))
                .getMessage().contains("btrfs-progs"));
        assertTrue(assertThrows(ToolException.class, () -> Tools.locate("resize2fs", List.of(emptyPath)))
                .getMessage().contains("e2fsprogs"));
        ToolException unknown = assertThrows(ToolException.class,
                () -> Tools.run(Duration.ofSeconds(1), "csi4j-no-such-tool", List.of()));
        assertEquals(ToolException.Reason.NOT_FOUND, unknown.reason());
    }

    @Test
    void timeoutKillsTheProgram() {
        long start = System.nanoTime();
        ToolException e = assertThrows(ToolException.class,
                () -> Tools.run(Duration.ofMillis(300), "sh", List.of("-c", "echo started >&2; exec sleep 30")));
        assertEquals(ToolException.Reason.TIMED_OUT, e.reason());
        assertTrue(e.getMessage().contains("did not finish within PT0.3S: started"), e.getMessage());
        assertTrue(System.nanoTime() - start < 10_000_000_000L);
    }

    @Test
    void timeoutKillsWhatTheProgramForked() throws Exception {
        ToolException e = assertThrows(ToolException.class,
                () -> Tools.run(Duration.ofMillis(300), "sh", List.of("-c", "sleep 37 & echo $! >&2; wait")));
        long child = Long.parseLong(e.stderr().strip());
        Thread.sleep(100);
        assertFalse(running(child), "sleep " + child + " was killed");
    }

    @Test
    void aDetachedGrandchildHoldingThePipeDoesNotHangUs() {
        long start = System.nanoTime();
        // the subshell forks a sleep that outlives sh (no longer our descendant) and keeps stdout open
        Tools.Result result = Tools.run(Duration.ofSeconds(10), "sh", List.of("-c", "(sleep 4 &); echo done"));
        assertEquals(0, result.exitCode());
        assertEquals("done\n", result.stdout(), "what was printed before the deadline is kept");
        assertTrue(System.nanoTime() - start < 3_500_000_000L, "one bounded wait for both pipes");
    }

    /** Alive and not a zombie (a killed orphan stays a zombie where PID 1 does not reap). */
    private static boolean running(long pid) throws Exception {
        Path stat = Path.of("/proc/" + pid + "/stat");
        if (!Files.exists(stat)) return false;
        String text = Files.readString(stat);
        return text.charAt(text.lastIndexOf(')') + 2) != 'Z';
    }

    @Test
    void unknownFilesystemTypeIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> Tools.mkfs("ntfs", Path.of("/dev/null"), List.of()));
    }

    @Test
    void blkidTellsFormattedFromBlank(@TempDir Path dir) throws Exception {
        Privileged.requireRoot();
        Path blank = dir.resolve("blank.img");
        try (RandomAccessFile f = new RandomAccessFile(blank.toFile(), "rw")) {
            f.setLength(64L << 20);
        }
        assertEquals(Optional.empty(), Tools.blkidType(blank));
        for (String fsType : List.of("ext4", "xfs", "btrfs")) {
            ScratchFilesystem.require(fsType);
            try (ScratchFilesystem fs = ScratchFilesystem.create(fsType)) {
                assertEquals(Optional.of(fsType), Tools.blkidType(fs.device().node()));
            }
        }
    }
}
