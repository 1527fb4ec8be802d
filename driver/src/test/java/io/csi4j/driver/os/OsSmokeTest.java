package io.csi4j.driver.os;

import io.csi4j.driver.testing.ScratchFilesystem;
import org.junit.jupiter.api.Test;

class OsSmokeTest {
    @Test
    void smoke() throws Exception {
        for (String t : new String[] {"ext4", "xfs", "btrfs"}) {
            ScratchFilesystem.require(t);
            try (var fs = ScratchFilesystem.create(t)) {
                System.out.println(fs.device() + " " + fs.stats() + " " + MountTable.read().at(fs.mountPoint()));
                System.out.println(LoopDevice.list());
                System.out.println("reflink " + Reflink.isSupported(fs.mountPoint()));
            }
            System.out.println(LoopDevice.list());
        }
    }
}
