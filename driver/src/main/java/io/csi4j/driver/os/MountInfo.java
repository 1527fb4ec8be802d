package io.csi4j.driver.os;

import java.nio.file.Path;
import java.util.List;

/**
 * One line of /proc/self/mountinfo, unescaped. {@code root} is the path inside the filesystem that
 * is mounted (not "/" for bind mounts of a subdirectory); {@code source} is free text ("/dev/loop3",
 * "tmpfs", "none").
 */
public record MountInfo(int id, int parentId, int major, int minor, String root, Path mountPoint,
                        List<String> mountOptions, List<String> optionalFields, String fsType, String source,
                        List<String> superOptions) {

    public MountInfo {
        mountOptions = List.copyOf(mountOptions);
        optionalFields = List.copyOf(optionalFields);
        superOptions = List.copyOf(superOptions);
    }

    /** Per-mount read-only (a read-only bind of a writable filesystem counts). */
    public boolean readOnly() {
        return mountOptions.contains("ro");
    }

    public boolean shared() {
        return optionalFields.stream().anyMatch(f -> f.startsWith("shared:"));
    }

    public boolean slave() {
        return optionalFields.stream().anyMatch(f -> f.startsWith("master:"));
    }
}
