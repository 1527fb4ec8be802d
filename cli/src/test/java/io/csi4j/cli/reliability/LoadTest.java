package io.csi4j.cli.reliability;

import static org.junit.jupiter.api.Assertions.*;

import io.csi4j.proto.addons.volumegroup.CreateVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.DeleteVolumeGroupRequest;
import io.csi4j.proto.addons.volumegroup.ListVolumeGroupsRequest;
import io.csi4j.proto.csi.*;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8, load: many concurrent clients on a few overlapping names and ids for a bounded time. Every
 * call answers within its deadline (no deadlock); ABORTED comes only from mutations (the spec's "an
 * operation is pending for this object"), never from reads; no call answers INTERNAL, UNKNOWN or
 * UNAVAILABLE; no acknowledged expansion is lost; a name never owns two volumes; and afterwards every
 * in-flight key is released: each name can be deleted, created and deleted again at once.
 */
class LoadTest {
    static final int CLIENTS = 24, NAMES = 6;
    static final Set<Status.Code> NEVER = Set.of(Status.Code.INTERNAL, Status.Code.UNKNOWN, Status.Code.UNAVAILABLE,
            Status.Code.DEADLINE_EXCEEDED, Status.Code.UNIMPLEMENTED, Status.Code.INVALID_ARGUMENT);

    private final Map<String, String> idOf = new ConcurrentHashMap<>();          // volume name -> last id answered
    private final Map<String, Long> ackedCapacity = new ConcurrentHashMap<>();   // volume id -> largest acknowledged size
    private final Map<String, LongAdder> codes = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    private final AtomicLong requests = new AtomicLong();

    @Test
    void overlappingClientsNeitherDeadlockNorLoseUpdates(@TempDir Path tmp) throws Exception {
        Leaks.requireRoot();
        long seconds = Long.getLong("csi4j.load.seconds", 20);
        long seed = Long.getLong("csi4j.load.seed", System.nanoTime());
        Path data = Files.createDirectories(tmp.resolve("data"));
        try (Plugin plugin = Plugin.start(data, "--engine", "image", "--pool-size", "2Gi", "--overcommit-ratio", "100")) {
            var rpc = new Rpc(plugin.channel(), plugin.addonsChannel());
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                Random random = new Random(seed + c);
                clients.add(Thread.ofVirtual().start(() -> {
                    while (System.nanoTime() < end && violations.size() < 20) step(rpc, random);
                }));
            }
            for (Thread t : clients) {
                t.join(Math.max(1, (end - System.nanoTime()) / 1_000_000) + 90_000);
                assertFalse(t.isAlive(), "a client is stuck: deadlock? " + t);
            }
            System.out.printf("load: %d clients, %d requests in %d s (seed %d); codes %s%n", CLIENTS, requests.get(), seconds, seed,
                    new TreeMap<>(codes));
            assertTrue(violations.isEmpty(), () -> String.join("\n", violations) + "\nplugin log around internal errors:\n"
                    + internalErrors(plugin.stderr()));

            // no lost update: every acknowledged expansion of a volume that still exists is in place
            Map<String, Long> listed = rpc.controller().listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                    .collect(Collectors.toMap(e -> e.getVolume().getVolumeId(), e -> e.getVolume().getCapacityBytes()));
            listed.forEach((id, capacity) -> {
                long acked = ackedCapacity.getOrDefault(id, 0L);
                assertTrue(capacity >= acked, "volume " + id + " lost an acknowledged expansion: " + capacity + " < " + acked);
            });
            assertTrue(listed.size() <= NAMES, "more volumes than names: " + listed.keySet());

            // every key released: each name can be deleted, created and deleted again, at once and without ABORTED
            for (String id : listed.keySet()) {
                rpc.controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id).setNodeId(World.NODE).build());
            }
            for (var g : rpc.volumeGroups().listVolumeGroups(ListVolumeGroupsRequest.getDefaultInstance()).getEntriesList()) {
                rpc.volumeGroups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(g.getVolumeGroup().getVolumeGroupId()).build());
            }
            for (var s : rpc.controller().listSnapshots(ListSnapshotsRequest.getDefaultInstance()).getEntriesList()) {
                rpc.controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s.getSnapshot().getSnapshotId()).build());
            }
            for (String id : rpc.controller().listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesList().stream()
                    .map(e -> e.getVolume().getVolumeId()).toList()) {
                rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            }
            long t0 = System.nanoTime();
            for (int n = 0; n < NAMES; n++) {
                String id = create(rpc, "load-v" + n).getVolumeId();
                rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build());
            }
            long millis = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("load: after the load every name was created and deleted again in %d ms%n", millis);
            assertTrue(millis < 10_000, "keys released promptly");
            assertEquals(0, rpc.controller().listVolumes(ListVolumesRequest.getDefaultInstance()).getEntriesCount());
            try (Stream<Path> images = Files.list(data.resolve("pool/volumes"))) {
                assertEquals(List.of(), images.toList(), "images left after deleting every volume");
            }
            assertEquals(0, plugin.stop(30_000));
        } finally {
            Leaks.cleanUp(tmp);
        }
    }

    private Volume create(Rpc rpc, String name) {
        return rpc.controller().createVolume(CreateVolumeRequest.newBuilder().setName(name)
                .setCapacityRange(Rpc.atLeast(World.VOLUME_BYTES)).addVolumeCapabilities(Rpc.mountXfs()).build()).getVolume();
    }

    /** One random call on a shared name or id; its answer checked against what the spec allows for it. */
    private void step(Rpc rpc, Random random) {
        int n = random.nextInt(NAMES);
        String name = "load-v" + n;
        String id = idOf.getOrDefault(name, "vol-unknown0000000-node-1");
        switch (random.nextInt(11)) {
            case 0, 1 -> call("CreateVolume", true, Set.of(), () -> {
                idOf.put(name, create(rpc, name).getVolumeId());
                return null;
            });
            case 2 -> call("DeleteVolume", true, Set.of(Status.Code.FAILED_PRECONDITION), () ->
                    rpc.controller().deleteVolume(DeleteVolumeRequest.newBuilder().setVolumeId(id).build()));
            case 3 -> {
                long size = World.VOLUME_BYTES + (64L << 20) * (1 + random.nextInt(4));
                call("ControllerExpandVolume", true, Set.of(Status.Code.NOT_FOUND), () -> {
                    long got = rpc.controller().controllerExpandVolume(ControllerExpandVolumeRequest.newBuilder().setVolumeId(id)
                            .setCapacityRange(Rpc.atLeast(size)).build()).getCapacityBytes();
                    if (got < size) violations.add("expand of " + id + " to " + size + " answered " + got);
                    ackedCapacity.merge(id, got, Math::max);
                    return null;
                });
            }
            case 4 -> call("ControllerModifyVolume", true, Set.of(Status.Code.NOT_FOUND), () ->
                    rpc.controller().controllerModifyVolume(ControllerModifyVolumeRequest.newBuilder().setVolumeId(id)
                            .putMutableParameters("readAheadKiB", String.valueOf(128 << random.nextInt(3))).build()));
            case 5 -> call("CreateSnapshot", true, Set.of(Status.Code.NOT_FOUND, Status.Code.ALREADY_EXISTS), () ->
                    rpc.controller().createSnapshot(CreateSnapshotRequest.newBuilder().setName("load-s" + n).setSourceVolumeId(id).build()));
            case 6 -> call("DeleteSnapshot", true, Set.of(), () -> {
                for (var s : rpc.controller().listSnapshots(ListSnapshotsRequest.newBuilder().setSourceVolumeId(id).build()).getEntriesList()) {
                    rpc.controller().deleteSnapshot(DeleteSnapshotRequest.newBuilder().setSnapshotId(s.getSnapshot().getSnapshotId()).build());
                }
                return null;
            });
            case 7 -> call(random.nextBoolean() ? "ControllerPublishVolume" : "ControllerUnpublishVolume", true,
                    Set.of(Status.Code.NOT_FOUND, Status.Code.ALREADY_EXISTS), () -> random.nextBoolean()
                            ? rpc.controller().controllerPublishVolume(ControllerPublishVolumeRequest.newBuilder().setVolumeId(id)
                                    .setNodeId(World.NODE).setVolumeCapability(Rpc.mountXfs()).build())
                            : rpc.controller().controllerUnpublishVolume(ControllerUnpublishVolumeRequest.newBuilder().setVolumeId(id)
                                    .setNodeId(World.NODE).build()));
            case 8 -> call("CreateVolumeGroup", true, Set.of(Status.Code.NOT_FOUND, Status.Code.ALREADY_EXISTS,
                    Status.Code.FAILED_PRECONDITION, Status.Code.RESOURCE_EXHAUSTED), () ->
                    rpc.volumeGroups().createVolumeGroup(CreateVolumeGroupRequest.newBuilder().setName("load-g" + (n % 2)).addVolumeIds(id).build()));
            case 9 -> call("DeleteVolumeGroup", true, Set.of(Status.Code.FAILED_PRECONDITION), () -> {
                for (var g : rpc.volumeGroups().listVolumeGroups(ListVolumeGroupsRequest.getDefaultInstance()).getEntriesList()) {
                    rpc.volumeGroups().deleteVolumeGroup(DeleteVolumeGroupRequest.newBuilder().setVolumeGroupId(g.getVolumeGroup().getVolumeGroupId()).build());
                }
                return null;
            });
            default -> call("reads", false, Set.of(Status.Code.NOT_FOUND), () -> {
                rpc.controller().listVolumes(ListVolumesRequest.getDefaultInstance());
                rpc.controller().listSnapshots(ListSnapshotsRequest.getDefaultInstance());
                rpc.controller().getCapacity(GetCapacityRequest.getDefaultInstance());
                return rpc.controller().controllerGetVolume(ControllerGetVolumeRequest.newBuilder().setVolumeId(id).build());
            });
        }
    }

    private void call(String what, boolean mutation, Set<Status.Code> alsoAllowed, Supplier<?> body) {
        requests.incrementAndGet();
        try {
            body.get();
            codes.computeIfAbsent("OK", k -> new LongAdder()).increment();
        } catch (StatusRuntimeException e) {
            Status.Code code = e.getStatus().getCode();
            codes.computeIfAbsent(code.name(), k -> new LongAdder()).increment();
            // ABORTED: an operation is pending for the object (mutations only); NOT_FOUND for a create: its
            // source (a volume another client just deleted) is gone
            boolean allowed = alsoAllowed.contains(code) || (code == Status.Code.ABORTED && mutation)
                    || (code == Status.Code.NOT_FOUND && what.startsWith("Create"));
            if (!allowed) violations.add(what + " answered " + e.getStatus());
        }
    }

    /** The plugin's log lines of internal errors (with their stack traces), so a failure says what went wrong inside. */
    static String internalErrors(String log) {
        List<String> lines = log.lines().toList();
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < lines.size() && out.length() < 20_000; i++) {
            if (!lines.get(i).contains("ref ")) continue;
            for (int j = Math.max(0, i - 2); j < Math.min(lines.size(), i + 40); j++) out.append(lines.get(j)).append('\n');
        }
        return out.isEmpty() ? "(none logged)" : out.toString();
    }
}
