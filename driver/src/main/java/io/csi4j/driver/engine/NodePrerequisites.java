package io.csi4j.driver.engine;

import io.csi4j.driver.os.Tools;
import io.csi4j.driver.os.ToolException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a node needs for what {@code serve} is asked to do (deploy/README.md, "Node prerequisites"), checked at
 * start-up: one line per missing thing, and a refusal only when the configured engine or pool cannot work without
 * it. {@link #check} holds the rules and is pure; {@link Facts#read} looks at this machine.
 */
public final class NodePrerequisites {
    private NodePrerequisites() {}

    /**
     * What serve will use: the engine, whether the pool is an XFS image on a loop device, and whether that image is
     * still to be made (mkfs.xfs) or is there already (adopted: mounted only).
     */
    public record Needs(EngineKind engine, boolean poolImage, boolean poolImageToMake) {
        boolean loops() { return engine == EngineKind.IMAGE || poolImage; }
    }

    /** Whether the kernel has a filesystem: loaded or built in, a module it can load, or not known from here. */
    public enum Availability { PRESENT, ABSENT, UNKNOWN }

    /**
     * The machine as found: the kernel release ({@code uname -r}), the loop driver, the filesystems csi4j formats,
     * and the programs of {@link #TOOLS} not found.
     */
    public record Facts(String kernelRelease, boolean loopDriver, Map<String, Availability> filesystems, Set<String> missingTools) {

        /** Reads /proc/sys/kernel/osrelease, /sys/module/loop, /dev/loop-control, /proc/filesystems, /lib/modules, PATH. */
        public static Facts read() {
            String release = readOr(Path.of("/proc/sys/kernel/osrelease"), "").strip();
            boolean loop = Files.exists(Path.of("/sys/module/loop")) || Files.exists(Path.of("/dev/loop-control"));
            String listed = readOr(Path.of("/proc/filesystems"), "");
            Path modules = Path.of("/lib/modules", release);
            Map<String, Availability> filesystems = new LinkedHashMap<>();
            for (String fs : FILESYSTEMS) {
                boolean loaded = listed.lines().map(String::strip).anyMatch(l -> l.equals(fs) || l.endsWith("\t" + fs) || l.endsWith(" " + fs));
                Availability a = loaded || Files.isDirectory(modules.resolve("kernel/fs/" + fs)) ? Availability.PRESENT
                        : Files.isDirectory(modules) ? Availability.ABSENT : Availability.UNKNOWN;
                filesystems.put(fs, a);
            }
            Set<String> missing = new TreeSet<>();
            for (String tool : TOOLS.keySet()) {
                try {
                    Tools.locate(tool);
                } catch (ToolException e) {
                    missing.add(tool);
                }
            }
            return new Facts(release, loop, filesystems, missing);
        }

        private static String readOr(Path file, String otherwise) {
            try {
                return Files.readString(file);
            } catch (IOException | RuntimeException e) {
                return otherwise;
            }
        }
    }

    /** One missing thing: the line to log, and whether serve must refuse to start for it. */
    public record Finding(String line, boolean refuses) {}

    static final List<String> FILESYSTEMS = List.of("ext4", "xfs", "btrfs");

    /** The programs the image engine runs, each with what is lost without it (the Debian package in parentheses). */
    static final Map<String, String> TOOLS = orderedMap(
            "blkid", "a device's existing filesystem cannot be recognised before formatting (util-linux)",
            "mkfs.ext4", "ext4 volumes cannot be formatted (e2fsprogs)",
            "resize2fs", "ext4 volumes cannot grow (e2fsprogs)",
            "e2fsck", "ext4 volumes cannot be checked before an offline growth (e2fsprogs)",
            "dumpe2fs", "ext4 volumes cannot be inspected before growing (e2fsprogs)",
            "tune2fs", "ext4 volume settings cannot be changed (e2fsprogs)",
            "mkfs.xfs", "xfs volumes and the XFS pool image cannot be formatted (xfsprogs)",
            "xfs_growfs", "xfs volumes cannot grow (xfsprogs)",
            "xfs_admin", "xfs volume settings cannot be changed (xfsprogs)",
            "mkfs.btrfs", "btrfs volumes cannot be formatted (btrfs-progs)",
            "btrfs", "btrfs volumes cannot grow or take the compression parameter (btrfs-progs)");

    static final String MIN_LOOP_CONFIGURE = "5.8";
    static final String MIN_MOUNT_SETATTR = "5.12";

    /** The findings for a machine and what serve will use; empty when nothing is missing. */
    public static List<Finding> check(Facts facts, Needs needs) {
        List<Finding> found = new ArrayList<>();
        int[] kernel = version(facts.kernelRelease());
        if (kernel == null) {
            found.add(new Finding("kernel release '" + facts.kernelRelease() + "' not understood: its features are not checked", false));
        } else {
            if (older(kernel, MIN_LOOP_CONFIGURE)) {
                found.add(new Finding("kernel " + facts.kernelRelease() + " is older than " + MIN_LOOP_CONFIGURE
                        + ": loop devices are attached with LOOP_CONFIGURE" + (needs.loops() ? "" : " (not used by this engine and pool)"), needs.loops()));
            }
            if (older(kernel, MIN_MOUNT_SETATTR)) {
                found.add(new Finding("kernel " + facts.kernelRelease() + " is older than " + MIN_MOUNT_SETATTR
                        + ": a read-only publish is a bind then a remount, and the host's propagated copy stays writable", false));
            }
        }
        if (!facts.loopDriver()) {
            found.add(new Finding("no loop driver (/sys/module/loop, /dev/loop-control): modprobe loop"
                    + (needs.loops() ? "" : " (not used by this engine and pool)"), needs.loops()));
        }
        for (String fs : FILESYSTEMS) {
            Availability a = facts.filesystems().getOrDefault(fs, Availability.UNKNOWN);
            if (a == Availability.PRESENT) continue;
            boolean pool = fs.equals("xfs") && needs.poolImage();
            String what = pool ? "the XFS pool image cannot be mounted" : fs + " volumes cannot be staged";
            found.add(a == Availability.ABSENT
                    ? new Finding(fs + " is not in /proc/filesystems nor a module of kernel " + facts.kernelRelease()
                            + ": " + what + " (modprobe " + fs + ")", pool)
                    : new Finding(fs + " is not loaded (/proc/filesystems) and /lib/modules/" + facts.kernelRelease()
                            + " is not visible here: the first " + fs + " mount tells whether the kernel has it", false));
        }
        if (needs.loops()) {
            for (var tool : TOOLS.entrySet()) {
                if (!facts.missingTools().contains(tool.getKey())) continue;
                boolean refuses = tool.getKey().equals("blkid") || (tool.getKey().equals("mkfs.xfs") && needs.poolImageToMake());
                found.add(new Finding(tool.getKey() + " not found: " + tool.getValue(), refuses));
            }
        }
        return found;
    }

    private static final Pattern RELEASE = Pattern.compile("^(\\d+)\\.(\\d+)");

    /** major.minor of a release such as 6.8.0-45-generic; null when it does not start so. */
    static int[] version(String release) {
        Matcher m = RELEASE.matcher(release == null ? "" : release);
        return m.find() ? new int[] {Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))} : null;
    }

    private static boolean older(int[] kernel, String minimum) {
        int[] min = version(minimum);
        return kernel[0] < min[0] || (kernel[0] == min[0] && kernel[1] < min[1]);
    }

    private static Map<String, String> orderedMap(String... pairs) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) map.put(pairs[i], pairs[i + 1]);
        return java.util.Collections.unmodifiableMap(map);
    }
}
