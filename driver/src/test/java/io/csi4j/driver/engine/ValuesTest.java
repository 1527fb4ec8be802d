package io.csi4j.driver.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.csi4j.driver.csi.StorageStatus;
import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.MountFlag;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.storage.StorageException;
import io.grpc.Status;
import java.nio.file.Path;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The engine's plain values: mount options, sidecars, capacity arithmetic, error codes (the image engine's: {@code image.ImageValuesTest}). */
class ValuesTest {

    @Test
    void mountFlagsSplitIntoBitsAndData() {
        MountOptions o = MountOptions.parse(List.of("noatime", "ro,nodev", "discard", "defaults", "nosuid", "data=ordered", "discard"));
        assertEquals(EnumSet.of(MountFlag.NOATIME, MountFlag.RDONLY, MountFlag.NODEV, MountFlag.NOSUID), o.flags());
        assertEquals(List.of("discard", "data=ordered"), o.data());
        assertEquals("discard,data=ordered", o.dataString());
        assertTrue(o.readOnly());
        assertNull(MountOptions.parse(List.of("rw", "sync")).dataString());
        assertEquals(EnumSet.of(MountFlag.SYNCHRONOUS), MountOptions.parse(List.of("sync")).flags());
        for (String refused : List.of("bind", "rbind", "remount", "move", "x-mount.mkdir=0755", "a\0b")) {
            assertEquals(Status.Code.INVALID_ARGUMENT,
                    StorageStatus.code(assertThrows(StorageException.class, () -> MountOptions.parse(List.of(refused))).reason()), refused);
        }
    }

    @Test
    void sidecarsRoundTrip() {
        Instant created = Instant.parse("2025-01-02T03:04:05.678Z");
        for (Artifact a : List.of(
                new Artifact("vol-abcdefghijklmnop-node-1", Artifact.Kind.VOLUME, "image", 1L << 40, AccessType.mount("xfs"),
                        Artifact.snapshotSource("snap-abcdefghijklmnop-node-1"), created),
                new Artifact("snap-x", Artifact.Kind.SNAPSHOT, "dir", 0, AccessType.BLOCK, "", created),
                new Artifact("q\"uo\\te", Artifact.Kind.VOLUME, "image", 5, AccessType.mount(""), "a\nb", created))) {
            assertEquals(a, Artifact.parse(a.toJson()));
            assertTrue(a.toJson().endsWith("}\n") && !a.toJson().strip().contains("\n"), a.toJson());
        }
        assertEquals(new Artifact("vol-abcdefghijklmnop-node-1", Artifact.Kind.VOLUME, "image", 1L << 40, AccessType.mount("xfs"),
                        Artifact.snapshotSource("snap-abcdefghijklmnop-node-1"), created, "pvc-1", "gs-1"),
                Artifact.parse("{\"id\":\"vol-abcdefghijklmnop-node-1\",\"kind\":\"volume\",\"engine\":\"image\","
                        + "\"sizeBytes\":1099511627776,\"access\":\"mount\",\"fsType\":\"xfs\","
                        + "\"source\":\"snapshot:snap-abcdefghijklmnop-node-1\",\"createdAt\":\"2025-01-02T03:04:05.678Z\","
                        + "\"name\":\"pvc-1\",\"group\":\"gs-1\"}\n"),
                "a sidecar as the hand-written codec wrote it");
        assertEquals(new Artifact("q\"uo\\te", Artifact.Kind.SNAPSHOT, "dir", 5, AccessType.BLOCK, "a\nb", created),
                Artifact.parse("{\"id\":\"q\\\"uo\\\\te\",\"kind\":\"snapshot\",\"engine\":\"dir\",\"sizeBytes\":5,"
                        + "\"access\":\"block\",\"fsType\":\"\",\"source\":\"a\\u000ab\",\"createdAt\":\"2025-01-02T03:04:05.678Z\"}\n"));
        assertThrows(IllegalArgumentException.class, () -> Artifact.parse("{\"id\":\"x\"}"));
        assertThrows(IllegalArgumentException.class, () -> Artifact.parse("not json"));
    }

    @Test
    void allocatableCapacityIsBoundedByPromisesAndByFreeSpace() {
        assertEquals(600, PoolInfo.allocatable(1000, 900, 400, 1.0));
        assertEquals(500, PoolInfo.allocatable(1000, 500, 400, 1.0), "thin data used space");
        assertEquals(1600, PoolInfo.allocatable(1000, 900, 400, 2.0));
        assertEquals(0, PoolInfo.allocatable(1000, 900, 1400, 1.0), "never negative");
    }

    @Test
    void osErrorsMapToTheSpecsCodes() {
        Map<Integer, Status.Code> expected = Map.of(
                Errno.ENOSPC, Status.Code.RESOURCE_EXHAUSTED, 122, Status.Code.RESOURCE_EXHAUSTED,
                Errno.ENOENT, Status.Code.NOT_FOUND, Errno.EBUSY, Status.Code.FAILED_PRECONDITION,
                Errno.EIO, Status.Code.INTERNAL);
        expected.forEach((errno, code) -> {
            StorageException e = assertThrows(StorageException.class, () -> EngineErrors.run("cutting x", () -> {
                throw new OsException("ioctl(FICLONE)", Path.of("/pool/a"), errno);
            }));
            assertEquals(code, StorageStatus.code(e.reason()), Errno.name(errno));
            assertTrue(e.getMessage().startsWith("cutting x: ioctl(FICLONE) on /pool/a: " + Errno.name(errno)), e.getMessage());
        });
        StorageException passed = StorageException.busy("x");
        assertEquals(passed, assertThrows(StorageException.class, () -> EngineErrors.run("y", () -> { throw passed; })));
    }

    @Test
    void idsMustBePlainSafeNames() {
        for (String ok : List.of("vol-abcdefghijklmnop-node-1", "snap-abcdefghijklmnop-_abcdefghijkl", "a", "node.example.com")) {
            assertEquals(ok, PoolLayout.checkId("volume", ok));
        }
        for (String bad : PathSafetyTest.HOSTILE) {
            assertEquals(Status.Code.INVALID_ARGUMENT,
                    StorageStatus.code(assertThrows(StorageException.class, () -> PoolLayout.checkId("volume", bad)).reason()), String.valueOf(bad));
        }
        assertTrue(Set.copyOf(MutableParameters.COMPRESSION).containsAll(List.of("zstd", "none")));
    }
}
