package io.csi4j.driver.reconcile;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.os.LoopDevice;
import io.csi4j.driver.os.MountTable;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The teardown's rules on a mount table and loop list as a node has them after serve stopped. */
class NodeTeardownTest {
    private static final Path DATA = Path.of("/var/lib/csi4j");

    private static LoopDevice loop(int n, String backing) {
        return new LoopDevice(n, Path.of("/dev/loop" + n), Path.of(backing), false, false, true);
    }

    @Test
    void volumeMountsThenInsideThenVolumeLoopsThenPoolThenPoolLoop() {
        MountTable table = MountTable.parse("""
                27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
                30 27 7:0 / /var/lib/csi4j/pool rw shared:2 - xfs /dev/loop0 rw
                31 27 7:1 / /var/lib/kubelet/plugins/kubernetes.io/csi/local.csi4j.io/abc/globalmount rw shared:3 - ext4 /dev/loop1 rw
                32 27 7:1 / /var/lib/kubelet/pods/p1/volumes/kubernetes.io~csi/pvc-1/mount rw shared:3 - ext4 /dev/loop1 rw
                33 27 0:5 /loop2 /var/lib/kubelet/pods/p2/volumeDevices/pvc-2 rw shared:4 - devtmpfs udev rw
                34 27 7:9 / /mnt/someone-else rw - ext4 /dev/loop9 rw
                35 27 0:5 /loop9 /mnt/someone-elses-block rw - devtmpfs udev rw
                36 27 0:40 / /var/lib/csi4j/scratch rw - tmpfs tmpfs rw
                """);
        List<LoopDevice> loops = List.of(loop(0, "/var/lib/csi4j/pool.img"), loop(1, "/var/lib/csi4j/pool/volumes/vol-a.img"),
                loop(2, "/var/lib/csi4j/pool/volumes/vol-b.img"), loop(9, "/srv/other.img"));
        var steps = NodeTeardown.plan(DATA, table, loops, null).stream().map(NodeTeardown::describe).toList();
        assertEquals(List.of(
                "mount /var/lib/kubelet/pods/p2/volumeDevices/pvc-2 (udev)",
                "mount /var/lib/kubelet/pods/p1/volumes/kubernetes.io~csi/pvc-1/mount (/dev/loop1)",
                "mount /var/lib/kubelet/plugins/kubernetes.io/csi/local.csi4j.io/abc/globalmount (/dev/loop1)",
                "mount /var/lib/csi4j/scratch (tmpfs)",
                "loop device /dev/loop1 (/var/lib/csi4j/pool/volumes/vol-a.img)",
                "loop device /dev/loop2 (/var/lib/csi4j/pool/volumes/vol-b.img)",
                "mount /var/lib/csi4j/pool (/dev/loop0)",
                "loop device /dev/loop0 (/var/lib/csi4j/pool.img)"), steps);
    }

    @Test
    void aDirectoryPoolsBindsAreItsOwnAndNothingElseOnThatDiskNorTheDataDirectorysOwnMount() {
        MountTable table = MountTable.parse("""
                27 1 254:0 / / rw,relatime shared:1 - xfs /dev/vda rw
                29 27 254:16 / /var/lib/csi4j rw - xfs /dev/vdb rw
                31 27 254:0 /var/lib/csi4j/pool/volumes/vol-a /var/lib/kubelet/pods/p1/volumes/kubernetes.io~csi/pvc-1/mount rw - xfs /dev/vda rw
                32 27 254:0 /var/lib/csi4j/pool-other /mnt/x rw - xfs /dev/vda rw
                33 27 254:0 /srv /srv2 rw - xfs /dev/vda rw
                """);
        var pool = new NodeTeardown.PoolDirectory(254, 0, "/var/lib/csi4j/pool");
        var steps = NodeTeardown.plan(DATA, table, List.of(), pool).stream().map(NodeTeardown::describe).toList();
        assertEquals(List.of("mount /var/lib/kubelet/pods/p1/volumes/kubernetes.io~csi/pvc-1/mount (/dev/vda)"), steps);
    }

    @Test
    void nothingLeftIsAnEmptyPlan() {
        MountTable table = MountTable.parse("27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n");
        assertEquals(List.of(), NodeTeardown.plan(DATA, table, List.of(loop(9, "/srv/other.img")), null));
    }
}
