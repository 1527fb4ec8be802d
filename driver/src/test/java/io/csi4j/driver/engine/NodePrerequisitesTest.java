package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.csi4j.driver.engine.NodePrerequisites.Availability;
import io.csi4j.driver.engine.NodePrerequisites.Facts;
import io.csi4j.driver.engine.NodePrerequisites.Finding;
import io.csi4j.driver.engine.NodePrerequisites.Needs;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The start-up prerequisite rules as a table: a machine, what serve will use, the lines and refusals expected. */
class NodePrerequisitesTest {
    private static final Needs IMAGE_NEW_POOL = new Needs(EngineKind.IMAGE, true, true);
    private static final Needs IMAGE_ADOPTED_POOL = new Needs(EngineKind.IMAGE, true, false);
    private static final Needs IMAGE_ON_REFLINK_DIR = new Needs(EngineKind.IMAGE, false, false);
    private static final Needs DIR_ON_DIR = new Needs(EngineKind.DIR, false, false);

    private static Facts facts(String kernel, boolean loop, String xfs, String btrfs, String... missingTools) {
        Map<String, Availability> fs = new LinkedHashMap<>();
        fs.put("ext4", Availability.PRESENT);
        fs.put("xfs", Availability.valueOf(xfs));
        fs.put("btrfs", Availability.valueOf(btrfs));
        return new Facts(kernel, loop, fs, Set.of(missingTools));
    }

    private static final Facts GOOD = facts("6.8.0-45-generic", true, "PRESENT", "PRESENT");

    record Row(String name, Facts facts, Needs needs, List<Finding> expected) {}

    static final List<Row> TABLE = List.of(
            new Row("a complete node", GOOD, IMAGE_NEW_POOL, List.of()),
            new Row("the dir engine needs no loop devices", facts("5.4.0", false, "PRESENT", "PRESENT"), DIR_ON_DIR, List.of(
                    new Finding("kernel 5.4.0 is older than 5.8: loop devices are attached with LOOP_CONFIGURE (not used by this engine and pool)", false),
                    new Finding("kernel 5.4.0 is older than 5.12: a read-only publish is a bind then a remount, and the host's propagated copy stays writable", false),
                    new Finding("no loop driver (/sys/module/loop, /dev/loop-control): modprobe loop (not used by this engine and pool)", false))),
            new Row("the image engine refuses an old kernel", facts("5.4.0-200-generic", true, "PRESENT", "PRESENT"), IMAGE_ON_REFLINK_DIR, List.of(
                    new Finding("kernel 5.4.0-200-generic is older than 5.8: loop devices are attached with LOOP_CONFIGURE", true),
                    new Finding("kernel 5.4.0-200-generic is older than 5.12: a read-only publish is a bind then a remount, and the host's propagated copy stays writable", false))),
            new Row("5.10 starts with the weaker read-only publish", facts("5.10.0", true, "PRESENT", "PRESENT"), IMAGE_NEW_POOL, List.of(
                    new Finding("kernel 5.10.0 is older than 5.12: a read-only publish is a bind then a remount, and the host's propagated copy stays writable", false))),
            new Row("the image engine refuses without loop", facts("6.1.0", false, "PRESENT", "PRESENT"), IMAGE_ON_REFLINK_DIR, List.of(
                    new Finding("no loop driver (/sys/module/loop, /dev/loop-control): modprobe loop", true))),
            new Row("a pool image refuses without xfs", facts("6.1.0", true, "ABSENT", "PRESENT"), IMAGE_ADOPTED_POOL, List.of(
                    new Finding("xfs is not in /proc/filesystems nor a module of kernel 6.1.0: the XFS pool image cannot be mounted (modprobe xfs)", true))),
            new Row("without a pool image xfs is one volume type less", facts("6.1.0", true, "ABSENT", "ABSENT"), IMAGE_ON_REFLINK_DIR, List.of(
                    new Finding("xfs is not in /proc/filesystems nor a module of kernel 6.1.0: xfs volumes cannot be staged (modprobe xfs)", false),
                    new Finding("btrfs is not in /proc/filesystems nor a module of kernel 6.1.0: btrfs volumes cannot be staged (modprobe btrfs)", false))),
            new Row("modules not visible (a container): said, never refused", facts("6.1.0", true, "UNKNOWN", "PRESENT"), IMAGE_NEW_POOL, List.of(
                    new Finding("xfs is not loaded (/proc/filesystems) and /lib/modules/6.1.0 is not visible here: the first xfs mount tells whether the kernel has it", false))),
            new Row("mkfs.xfs refuses only when the pool image is still to be made", facts("6.1.0", true, "PRESENT", "PRESENT", "mkfs.xfs", "mkfs.btrfs"), IMAGE_NEW_POOL, List.of(
                    new Finding("mkfs.xfs not found: xfs volumes and the XFS pool image cannot be formatted (xfsprogs)", true),
                    new Finding("mkfs.btrfs not found: btrfs volumes cannot be formatted (btrfs-progs)", false))),
            new Row("an adopted pool starts without mkfs.xfs", facts("6.1.0", true, "PRESENT", "PRESENT", "mkfs.xfs"), IMAGE_ADOPTED_POOL, List.of(
                    new Finding("mkfs.xfs not found: xfs volumes and the XFS pool image cannot be formatted (xfsprogs)", false))),
            new Row("blkid is indispensable wherever loops are", facts("6.1.0", true, "PRESENT", "PRESENT", "blkid", "resize2fs"), IMAGE_ON_REFLINK_DIR, List.of(
                    new Finding("blkid not found: a device's existing filesystem cannot be recognised before formatting (util-linux)", true),
                    new Finding("resize2fs not found: ext4 volumes cannot grow (e2fsprogs)", false))),
            new Row("the dir engine on a directory runs no tools", facts("6.1.0", true, "PRESENT", "PRESENT", "blkid", "mkfs.xfs"), DIR_ON_DIR, List.of()),
            new Row("an unreadable release is said, not refused", facts("unknown", true, "PRESENT", "PRESENT"), IMAGE_NEW_POOL, List.of(
                    new Finding("kernel release 'unknown' not understood: its features are not checked", false))));

    @Test
    void table() {
        for (Row row : TABLE) {
            assertEquals(row.expected(), NodePrerequisites.check(row.facts(), row.needs()), row.name());
        }
    }

    @Test
    void thisMachineReadsAndParses() {
        Facts here = NodePrerequisites.Facts.read();
        assertNotNull(NodePrerequisites.version(here.kernelRelease()), here.kernelRelease());
        assertEquals(Set.of("ext4", "xfs", "btrfs"), here.filesystems().keySet());
    }
}
