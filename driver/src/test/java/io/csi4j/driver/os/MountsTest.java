package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MountsTest {
    @TempDir
    Path dir;

    private final List<Path> mounted = new ArrayList<>();

    @BeforeEach
    void root() {
        Privileged.requireRoot();
    }

    @AfterEach
    void unmountEverything() {
        for (MountInfo m : MountTable.read().under(dir)) Mounts.unmount(m.mountPoint(), UnmountFlag.DETACH);
    }

    private Path tmpfs(String name, Set<MountFlag> flags) throws Exception {
        Path target = Files.createDirectories(dir.resolve(name));
        Mounts.mount("csi4j-" + name, target, "tmpfs", flags, "size=4m");
        return target;
    }

    @Test
    void bindShowsTheSameFiles() throws Exception {
        Path source = tmpfs("source", Set.of());
        Files.writeString(source.resolve("hello"), "world");
        Path target = Files.createDirectories(dir.resolve("target"));

        Mounts.bind(source, target);

        assertEquals("world", Files.readString(target.resolve("hello")));
        Files.writeString(target.resolve("back"), "through the bind");
        assertEquals("through the bind", Files.readString(source.resolve("back")));
        assertEquals("csi4j-source", MountTable.read().at(target).orElseThrow().source());
    }

    /**
     * A publish under a shared directory (the kubelet's, with Bidirectional propagation) is copied into its peers (the
     * host's view, and from there the pod's). Flags set before the bind is attached reach every copy; a bind followed
     * by a remount leaves the copies writable, which is why publishing does not do that.
     */
    @Test
    void flagsSetBeforeTheBindReachEveryPropagatedCopy() throws Exception {
        Path shared = tmpfs("shared", Set.of());
        Mounts.setPropagation(shared, Propagation.SHARED, false);
        Path peer = Files.createDirectories(dir.resolve("peer"));
        Mounts.bind(shared, peer);                                   // in the peer group of a shared mount
        Path source = tmpfs("source", Set.of());
        Files.writeString(source.resolve("data"), "kept");
        Path readOnly = Files.createDirectories(shared.resolve("ro"));
        Path remounted = Files.createDirectories(shared.resolve("remounted"));
        try {
            Mounts.bindWithFlags(source, readOnly, EnumSet.of(MountFlag.RDONLY, MountFlag.NOEXEC));
            MountInfo copy = MountTable.read().at(peer.resolve("ro")).orElseThrow(() -> new AssertionError("not propagated"));
            assertTrue(copy.readOnly(), "the propagated copy is read-only: " + copy.mountOptions());
            assertTrue(copy.mountOptions().contains("noexec"), copy.mountOptions().toString());
            assertEquals("kept", Files.readString(peer.resolve("ro").resolve("data")));
            var refused = assertThrows(java.nio.file.FileSystemException.class,
                    () -> Files.writeString(peer.resolve("ro").resolve("written"), "through the copy"));
            assertTrue(String.valueOf(refused.getReason()).contains("Read-only"), refused.toString());

            Mounts.bindReadOnlyByRemount(source, remounted);
            assertTrue(MountTable.read().at(remounted).orElseThrow().readOnly());
            assertFalse(MountTable.read().at(peer.resolve("remounted")).orElseThrow().readOnly(),
                    "the remount changed one mount only: the reason publishing sets flags before attaching");
        } finally {
            for (Path p : List.of(readOnly, remounted, peer)) {
                try {
                    Mounts.unmount(p, UnmountFlag.DETACH);
                } catch (RuntimeException gone) {
                    // unmounted with its peer already
                }
            }
        }
    }

    @Test
    void readOnlyBindRefusesWritesWithErofsButLeavesTheSourceWritable() throws Exception {
        Path source = tmpfs("source", Set.of());
        Path target = Files.createDirectories(dir.resolve("target"));

        Mounts.bindReadOnly(source, target);

        assertTrue(MountTable.read().at(target).orElseThrow().readOnly());
        assertTrue(FsStats.of(target).readOnly(), "statfs f_flags has ST_RDONLY");
        assertFalse(FsStats.of(source).readOnly());
        OsException e = assertThrows(OsException.class,
                () -> Fd.open(target.resolve("new"), Libc.O_WRONLY | Libc.O_CREAT, 0644).close());
        assertEquals(Errno.EROFS, e.errno());
        assertEquals("EROFS", e.errnoName());
        Files.writeString(source.resolve("new"), "still writable");
        assertEquals("still writable", Files.readString(target.resolve("new")));
    }

    @Test
    void readOnlyRemountKeepsNosuidNodevNoexecOfTheMount() throws Exception {
        Path source = tmpfs("source", EnumSet.of(MountFlag.NOSUID, MountFlag.NODEV, MountFlag.NOEXEC, MountFlag.NOATIME));
        Path target = Files.createDirectories(dir.resolve("target"));
        Mounts.bind(source, target);

        Mounts.remountBindReadOnly(target);

        List<String> options = MountTable.read().at(target).orElseThrow().mountOptions();
        assertTrue(options.containsAll(List.of("ro", "nosuid", "nodev", "noexec", "noatime")), options.toString());
    }

    @Test
    void propagation() throws Exception {
        Path a = tmpfs("a", Set.of());
        Mounts.setPropagation(a, Propagation.PRIVATE, false);
        assertFalse(MountTable.read().at(a).orElseThrow().shared());

        Mounts.setPropagation(a, Propagation.SHARED, false);
        assertTrue(MountTable.read().at(a).orElseThrow().shared());

        Path b = Files.createDirectories(dir.resolve("b"));
        Mounts.bind(a, b);
        assertTrue(MountTable.read().at(b).orElseThrow().shared(), "a bind of a shared mount joins its peer group");
        Mounts.setPropagation(b, Propagation.SLAVE, false);
        MountInfo slave = MountTable.read().at(b).orElseThrow();
        assertTrue(slave.slave());
        assertFalse(slave.shared());

        // a mount under the shared master propagates to the slave
        Path sub = Files.createDirectories(a.resolve("sub"));
        Mounts.mount("csi4j-sub", sub, "tmpfs", Set.of(), "size=1m");
        assertTrue(MountTable.read().isMountPoint(b.resolve("sub")));
    }

    @Test
    void unmountOfANonMountPointIsEinvalNamingThePath() throws Exception {
        Path plain = Files.createDirectories(dir.resolve("plain"));
        OsException e = assertThrows(OsException.class, () -> Mounts.unmount(plain));
        assertEquals(Errno.EINVAL, e.errno());
        assertEquals("umount2", e.call());
        assertEquals(plain, e.path());
        assertEquals("umount2(" + plain + "): EINVAL (Invalid argument)", e.getMessage());
    }

    @Test
    void busyMountNeedsDetach() throws Exception {
        Path target = tmpfs("busy", Set.of());
        try (var open = Files.newOutputStream(target.resolve("held"))) {
            OsException e = assertThrows(OsException.class, () -> Mounts.unmount(target));
            assertEquals(Errno.EBUSY, e.errno());
            assertTrue(e.getMessage().endsWith("EBUSY (Device or resource busy)"), e.getMessage());
            Mounts.unmount(target, UnmountFlag.DETACH);
            assertFalse(MountTable.read().isMountPoint(target));
            open.write(1); // the detached filesystem lives on while the file is open
        }
    }

    @Test
    void mountErrorsNameSourceAndTarget() throws Exception {
        Path missing = dir.resolve("missing");
        Path target = Files.createDirectories(dir.resolve("target"));
        OsException e = assertThrows(OsException.class, () -> Mounts.bind(missing, target));
        assertEquals(Errno.ENOENT, e.errno());
        assertEquals("mount(" + missing + " -> " + target + "): ENOENT (No such file or directory)", e.getMessage());

        OsException badType = assertThrows(OsException.class,
                () -> Mounts.mount("none", target, "csi4j-no-such-fs", Set.of(), null));
        assertEquals(Errno.ENODEV, badType.errno());
    }
}
