package io.csi4j.driver.addons;

import io.csi4j.driver.DriverConfig;
import io.csi4j.driver.DriverConfig.GroupDeletePolicy;
import io.csi4j.driver.addons.Plugin.Setup;
import io.csi4j.driver.group.VolumeGroups;
import io.csi4j.driver.model.ContentSource;
import io.csi4j.driver.plugin.Driver;
import io.csi4j.driver.volume.AccessMode;
import io.csi4j.driver.volume.Capability;
import io.csi4j.driver.volume.CapacityRange;
import io.csi4j.driver.volume.NewVolume;
import java.nio.file.Path;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Child JVM of {@link GroupDeleteCrashTest}: opens a driver, creates a group of three volumes and a volume
 * outside it, prints their ids, then deletes the group and stops dead at the given step (after printing
 * {@code STOPPED}) until the parent kills it with SIGKILL.
 *
 * <p>Arguments: data directory, {@link Setup} name, {@link VolumeGroups.Step} name, how many times that step
 * must be reached before stopping.
 */
public final class GroupDeleteCrashChild {
    public static void main(String[] args) throws Exception {
        Path dataDir = Path.of(args[0]);
        Setup setup = Setup.valueOf(args[1]);
        VolumeGroups.Step stopAt = VolumeGroups.Step.valueOf(args[2]);
        int occurrence = Integer.parseInt(args[3]);
        DriverConfig config = Plugin.config(dataDir, "node-a", setup, GroupDeletePolicy.DELETE_VOLUMES, 8);
        Driver driver = Driver.open(config);                    // never closed: the process dies
        List<String> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) members.add(driver.volumes().creation().create(volume("member-" + i)).id());
        String bystander = driver.volumes().creation().create(volume("bystander")).id();
        String group = driver.volumeGroups().create("doomed", Map.of(), members).id();
        System.out.println("IDS " + group + " " + bystander + " " + String.join(" ", members));
        System.out.flush();

        int[] seen = {0};
        var stopping = new VolumeGroups(driver.catalog(), driver.engine(), driver.volumes(), config, InstantSource.system(),
                (step, id) -> {
                    if (step != stopAt || ++seen[0] < occurrence) return;
                    System.out.println("STOPPED " + step + " " + id);
                    System.out.flush();
                    try {
                        Thread.sleep(Long.MAX_VALUE);           // the parent's SIGKILL lands here
                    } catch (InterruptedException e) {
                        Runtime.getRuntime().halt(3);
                    }
                });
        stopping.delete(group);
        System.out.println("DONE");                            // the parent fails the test if it gets here
        System.out.flush();
    }

    private static NewVolume volume(String name) {
        return new NewVolume(name, CapacityRange.ANY, List.of(Capability.mount(AccessMode.SINGLE_NODE_WRITER, "ext4")),
                Map.of(), Map.of(), ContentSource.NONE, Optional.empty());
    }
}
