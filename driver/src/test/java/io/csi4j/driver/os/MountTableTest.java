package io.csi4j.driver.os;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.testing.Privileged;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MountTableTest {

    private static final String SAMPLE = """
            22 27 0:21 / /proc rw,relatime - proc proc rw
            27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
            36 27 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
            40 27 7:3 / /var/lib/kubelet/pods/a\\040b/volumes/my\\011vol ro,nosuid shared:7 master:2 - xfs /dev/loop3 rw,attr2
            41 27 0:50 /sub\\134dir /srv/back\\134slash rw - tmpfs my\\040tmpfs rw,size=1024k
            42 27 0:51 / /srv/stacked rw - tmpfs first rw
            43 42 0:52 / /srv/stacked rw - tmpfs second rw
            """;

    @Test
    void parsesFieldsOptionalFieldsAndOctalEscapes() {
        MountTable table = MountTable.parse(SAMPLE);
        assertEquals(7, table.mounts().size());

        MountInfo kubelet = table.at(Path.of("/var/lib/kubelet/pods/a b/volumes/my\tvol")).orElseThrow();
        assertEquals(40, kubelet.id());
        assertEquals(27, kubelet.parentId());
        assertEquals(7, kubelet.major());
        assertEquals(3, kubelet.minor());
        assertEquals(List.of("ro", "nosuid"), kubelet.mountOptions());
        assertEquals(List.of("shared:7", "master:2"), kubelet.optionalFields());
        assertTrue(kubelet.readOnly());
        assertTrue(kubelet.shared());
        assertTrue(kubelet.slave());
        assertEquals("xfs", kubelet.fsType());
        assertEquals("/dev/loop3", kubelet.source());
        assertEquals(List.of("rw", "attr2"), kubelet.superOptions());

        MountInfo bind = table.at(Path.of("/srv/back\\slash")).orElseThrow();
        assertEquals("/sub\\dir", bind.root());
        assertEquals("my tmpfs", bind.source());
        assertEquals(List.of("rw", "size=1024k"), bind.superOptions());
        assertEquals(List.of(), bind.optionalFields());

        MountInfo bindMount = table.at(Path.of("/mnt2")).orElseThrow();
        assertEquals("/mnt1", bindMount.root());
        assertFalse(bindMount.readOnly());
        assertFalse(bindMount.shared());
        assertTrue(bindMount.slave());
    }

    @Test
    void lookups() {
        MountTable table = MountTable.parse(SAMPLE);
        assertEquals("second", table.at(Path.of("/srv/stacked")).orElseThrow().source(), "the mount on top wins");
        assertTrue(table.isMountPoint(Path.of("/proc")));
        assertFalse(table.isMountPoint(Path.of("/srv")));
        assertEquals(List.of(40), table.bySource("/dev/loop3").stream().map(MountInfo::id).toList());
        assertEquals(List.of(43, 42), table.under(Path.of("/srv/stacked")).stream().map(MountInfo::id).toList());
        assertEquals(List.of(40), table.mountsOf(Path.of("/dev/loop3")).stream().map(MountInfo::id).toList());
    }

    @Test
    void unescapeLeavesNonOctalBackslashesAlone() {
        assertEquals("a b", MountTable.unescape("a\\040b"));
        assertEquals("a\\x", MountTable.unescape("a\\x"));
        assertEquals("end\\04", MountTable.unescape("end\\04"));
        assertEquals("a\\", MountTable.unescape("a\\134"));
    }

    @Test
    void rejectsMalformedLine() {
        assertThrows(IllegalArgumentException.class, () -> MountTable.parse("1 2 3:4 / /x rw no-separator here"));
    }

    @Test
    void readsTheLiveKernelTable(@TempDir Path dir) throws Exception {
        Privileged.requireRoot();
        Path target = Files.createDirectories(dir.resolve("with space\tand tab"));
        assertFalse(MountTable.read().isMountPoint(target));
        Mounts.mount("csi4j scratch", target, "tmpfs", Set.of(MountFlag.NOSUID), "size=1m");
        try {
            MountInfo mount = MountTable.read().at(target).orElseThrow();
            assertEquals(target.toRealPath(), mount.mountPoint());
            assertEquals("tmpfs", mount.fsType());
            assertEquals("csi4j scratch", mount.source());
            assertTrue(mount.mountOptions().contains("nosuid"));
            assertTrue(mount.superOptions().contains("size=1024k"));
            assertEquals(List.of(mount), MountTable.read().bySource("csi4j scratch"));

            Mounts.mount("csi4j upper", target, "tmpfs", Set.of(), "size=1m");
            try {
                assertEquals("csi4j upper", MountTable.read().at(target).orElseThrow().source());
                assertEquals(List.of("csi4j upper", "csi4j scratch"),
                        MountTable.read().under(dir).stream().map(MountInfo::source).toList());
            } finally {
                Mounts.unmount(target);
            }
            assertEquals("csi4j scratch", MountTable.read().at(target).orElseThrow().source());
        } finally {
            Mounts.unmount(target);
        }
        assertFalse(MountTable.read().isMountPoint(target), "read() is never cached");
    }

    @Test
    void lookupCanonicalizesTheQueryPath(@TempDir Path dir) throws Exception {
        Privileged.requireRoot();
        Path target = Files.createDirectories(dir.resolve("real"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), target);
        Mounts.mount("csi4j-link", target, "tmpfs", Set.of(), "size=1m");
        try {
            assertTrue(MountTable.read().isMountPoint(link));
            assertTrue(MountTable.read().isMountPoint(dir.resolve("real/../real/.")));
        } finally {
            Mounts.unmount(target);
        }
    }
}
