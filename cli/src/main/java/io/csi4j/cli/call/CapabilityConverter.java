package io.csi4j.cli.call;

import io.csi4j.proto.csi.VolumeCapability;
import io.csi4j.proto.csi.VolumeCapability.AccessMode.Mode;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code --cap MODE,mount|block[,FSTYPE[,FLAG...]]}, e.g. {@code SINGLE_NODE_WRITER,mount,ext4,noatime}.
 * MODE is an AccessMode name (any case) or a Kubernetes alias: RWO, ROX, RWX, RWOP.
 */
public final class CapabilityConverter implements ITypeConverter<VolumeCapability> {
    public static final String DEFAULT = "SINGLE_NODE_WRITER,mount";
    private static final Map<String, Mode> ALIASES = Map.of(
            "RWO", Mode.SINGLE_NODE_WRITER, "ROX", Mode.MULTI_NODE_READER_ONLY,
            "RWX", Mode.MULTI_NODE_MULTI_WRITER, "RWOP", Mode.SINGLE_NODE_SINGLE_WRITER);

    public static VolumeCapability parse(String text) {
        List<String> parts = Arrays.asList(text.split(",", -1));
        if (parts.size() < 2) throw new IllegalArgumentException("capability '" + text + "' is not MODE,mount|block[,FSTYPE[,FLAGS]]");
        var cap = VolumeCapability.newBuilder()
                .setAccessMode(VolumeCapability.AccessMode.newBuilder().setMode(mode(parts.getFirst().strip())));
        switch (parts.get(1).strip().toLowerCase(Locale.ROOT)) {
            case "block" -> {
                if (parts.size() > 2) throw new IllegalArgumentException("a block capability has no fs type or mount flags: '" + text + "'");
                cap.setBlock(VolumeCapability.BlockVolume.getDefaultInstance());
            }
            case "mount" -> {
                var mount = VolumeCapability.MountVolume.newBuilder();
                if (parts.size() > 2) mount.setFsType(parts.get(2).strip());
                parts.stream().skip(3).map(String::strip).filter(f -> !f.isEmpty()).forEach(mount::addMountFlags);
                cap.setMount(mount);
            }
            default -> throw new IllegalArgumentException("access type must be mount or block, not '" + parts.get(1) + "' in '" + text + "'");
        }
        return cap.build();
    }

    /** The capabilities given, or the default one when none was. */
    public static List<VolumeCapability> orDefault(List<VolumeCapability> given) {
        return given == null || given.isEmpty() ? List.of(parse(DEFAULT)) : given;
    }

    static VolumeCapability withMountGroup(VolumeCapability cap, String group) {
        if (group == null) return cap;
        if (!cap.hasMount()) throw new IllegalArgumentException("--mount-group needs a mount capability");
        return cap.toBuilder().setMount(cap.getMount().toBuilder().setVolumeMountGroup(group)).build();
    }

    private static Mode mode(String name) {
        String upper = name.toUpperCase(Locale.ROOT);
        if (ALIASES.containsKey(upper)) return ALIASES.get(upper);
        try {
            Mode mode = Mode.valueOf(upper);
            if (mode != Mode.UNRECOGNIZED && mode != Mode.UNKNOWN) return mode;
        } catch (IllegalArgumentException ignored) {
            // fall through to the message listing the names
        }
        throw new IllegalArgumentException("unknown access mode '" + name + "'; one of "
                + Arrays.stream(Mode.values()).filter(m -> m != Mode.UNRECOGNIZED && m != Mode.UNKNOWN).map(Mode::name).toList()
                + " or RWO, ROX, RWX, RWOP");
    }

    @Override
    public VolumeCapability convert(String value) {
        try {
            return parse(value);
        } catch (IllegalArgumentException e) {
            throw new TypeConversionException(e.getMessage());
        }
    }
}
