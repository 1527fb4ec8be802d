package io.csi4j.cli.bench;

import io.csi4j.proto.csi.*;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import io.grpc.StatusRuntimeException;

/**
 * What one iteration of a scenario does. Each RPC goes through the worker's {@link Recorder}; a failed
 * RPC ends the iteration. Whatever an iteration creates is entered in the {@link Ledger} first, so a
 * failure half-way leaves nothing behind after clean-up.
 */
sealed interface Workload {

    /** Prepares what every iteration shares (a source volume, per-worker volumes); runs once, not measured. */
    default void setUp(BenchRun run) {}

    void iteration(BenchRun run, Recorder r, int worker, long ticket);

    /** CreateVolume then DeleteVolume. */
    record CreateDelete() implements Workload {
        @Override
        public void iteration(BenchRun run, Recorder r, int worker, long ticket) {
            createDelete(run, r, ticket);
        }
    }

    /** CreateSnapshot then DeleteSnapshot of one shared source volume (holding --fill bytes of data). */
    final class SnapshotCreateDelete implements Workload {
        private String source;

        @Override
        public void setUp(BenchRun run) {
            source = run.sourceVolume(run.runId() + "-source");
        }

        @Override
        public void iteration(BenchRun run, Recorder r, int worker, long ticket) {
            snapshot(run, r, source, ticket);
        }
    }

    /** ListVolumes, following next_token to the last page: how listing grows with --prefill. */
    record ListAll(int pageSize) implements Workload {
        @Override
        public void iteration(BenchRun run, Recorder r, int worker, long ticket) {
            String token = "";
            do {
                String t = token;
                var page = r.call("ListVolumes", () -> run.session().controller().listVolumes(
                        ListVolumesRequest.newBuilder().setMaxEntries(pageSize).setStartingToken(t).build()));
                token = page.getNextToken();
            } while (!token.isEmpty());
        }
    }

    /** Identity Probe: the cost of a round trip through the plugin's gRPC stack. */
    record Probe() implements Workload {
        @Override
        public void iteration(BenchRun run, Recorder r, int worker, long ticket) {
            r.call("Probe", () -> run.session().identity().probe(ProbeRequest.getDefaultInstance()));
        }
    }

    /**
     * One volume per worker, created (and controller-published when the plugin has PUBLISH_UNPUBLISH_VOLUME) up
     * front; each iteration stages, publishes, unpublishes and unstages it.
     */
    final class StagePublish implements Workload {
        private String[] volumes;
        private boolean stage;

        @Override
        public void setUp(BenchRun run) {
            stage = run.nodeAccess().stage();
            volumes = new String[run.concurrency()];
            var setup = new Recorder();
            for (int w = 0; w < volumes.length; w++) volumes[w] = run.nodeVolume(setup, run.runId() + "-node-" + w);
        }

        @Override
        public void iteration(BenchRun run, Recorder r, int worker, long ticket) {
            String id = volumes[worker];
            var paths = run.ledger().nodePaths.get(id);
            String staging = paths.staging().toString();
            String target = paths.target().toString();
            var node = run.session();
            if (stage) {
                r.call("NodeStageVolume", () -> node.node().nodeStageVolume(NodeStageVolumeRequest.newBuilder().setVolumeId(id)
                        .setStagingTargetPath(staging).setVolumeCapability(run.capability()).putAllSecrets(run.secrets()).build()));
            }
            var publish = NodePublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target)
                    .setVolumeCapability(run.capability()).putAllSecrets(run.secrets());
            if (stage) publish.setStagingTargetPath(staging);
            r.call("NodePublishVolume", () -> node.node().nodePublishVolume(publish.build()));
            r.call("NodeUnpublishVolume", () -> node.node().nodeUnpublishVolume(
                    NodeUnpublishVolumeRequest.newBuilder().setVolumeId(id).setTargetPath(target).build()));
            if (stage) {
                r.call("NodeUnstageVolume", () -> node.node().nodeUnstageVolume(
                        NodeUnstageVolumeRequest.newBuilder().setVolumeId(id).setStagingTargetPath(staging).build()));
            }
        }
    }

    /** CreateVolume from the source volume (a clone; the source holds --fill bytes of data), then DeleteVolume. */
    final class CloneDelete implements Workload {
        private VolumeContentSource source;

        @Override
        public void setUp(BenchRun run) {
            source = VolumeContentSource.newBuilder().setVolume(VolumeContentSource.VolumeSource.newBuilder()
                    .setVolumeId(run.sourceVolume(run.runId() + "-source"))).build();
        }

        @Override
        public void iteration(BenchRun run, Recorder r, int worker, long ticket) {
            createFromDelete(run, r, ticket, source);
        }
    }

    /** CreateVolume from a snapshot of the source volume (a restore), then DeleteVolume. */
    final class RestoreDelete implements Workload {
        private VolumeContentSource source;

        @Override
        public void setUp(BenchRun run) {
            String volume = run.sourceVolume(run.runId() + "-source");
            String snapshot = run.session().controller().createSnapshot(CreateSnapshotRequest.newBuilder()
                    .setName(run.runId() + "-restore-source").setSourceVolumeId(volume).putAllSecrets(run.secrets()).build())
                    .getSnapshot().getSnapshotId();
            run.ledger().snapshots.add(snapshot);
            source = VolumeContentSource.newBuilder().setSnapshot(VolumeContentSource.SnapshotSource.newBuilder()
                    .setSnapshotId(snapshot)).build();
        }

        @Override
        public void iteration(BenchRun run, Recorder r, int worker, long ticket) {
            createFromDelete(run, r, ticket, source);
        }
    }

    /** CreateVolumeGroupSnapshot of --group-size source volumes (each holding --fill bytes), then its delete. */
    final class GroupSnapshotDelete implements Workload {
        private final List<String> sources = new ArrayList<>();

        @Override
        public void setUp(BenchRun run) {
            for (int i = 0; i < run.groupSize(); i++) sources.add(run.sourceVolume(run.runId() + "-source-" + i));
        }

        @Override
        public void iteration(BenchRun run, Recorder r, int worker, long ticket) {
            String name = run.runId() + "-group-" + ticket;
            VolumeGroupSnapshot group;
            try {
                group = r.call("CreateVolumeGroupSnapshot", () -> run.session().group().createVolumeGroupSnapshot(
                        CreateVolumeGroupSnapshotRequest.newBuilder().setName(name).addAllSourceVolumeIds(sources)
                                .putAllSecrets(run.secrets()).build())).getGroupSnapshot();
            } catch (StatusRuntimeException e) {
                if (BenchRun.mayHaveHappened(e)) run.ledger().uncertainGroupSnapshots.put(name, sources);
                throw e;
            }
            List<String> members = group.getSnapshotsList().stream().map(Snapshot::getSnapshotId).toList();
            run.ledger().groupSnapshots.put(group.getGroupSnapshotId(), members);
            r.call("DeleteVolumeGroupSnapshot", () -> run.session().group().deleteVolumeGroupSnapshot(
                    DeleteVolumeGroupSnapshotRequest.newBuilder().setGroupSnapshotId(group.getGroupSnapshotId())
                            .addAllSnapshotIds(members).putAllSecrets(run.secrets()).build()));
            run.ledger().groupSnapshots.remove(group.getGroupSnapshotId());
        }
    }

    /** A fixed cycle of four: Probe, one page of ListVolumes, create+delete a volume, create+delete a snapshot. */
    final class Mixed implements Workload {
        private String source;

        @Override
        public void setUp(BenchRun run) {
            source = run.sourceVolume(run.runId() + "-source");
        }

        @Override
        public void iteration(BenchRun run, Recorder r, int worker, long ticket) {
            switch ((int) (ticket % 4)) {
                case 0 -> r.call("Probe", () -> run.session().identity().probe(ProbeRequest.getDefaultInstance()));
                case 1 -> r.call("ListVolumes", () -> run.session().controller().listVolumes(
                        ListVolumesRequest.newBuilder().setMaxEntries(100).build()));
                case 2 -> createDelete(run, r, ticket);
                default -> snapshot(run, r, source, ticket);
            }
        }
    }

    private static void createDelete(BenchRun run, Recorder r, long ticket) {
        String id = run.createVolume(r, run.runId() + "-" + ticket);
        r.call("DeleteVolume", () -> run.session().controller().deleteVolume(
                DeleteVolumeRequest.newBuilder().setVolumeId(id).putAllSecrets(run.secrets()).build()));
        run.ledger().volumes.remove(id);
    }

    private static void createFromDelete(BenchRun run, Recorder r, long ticket, VolumeContentSource source) {
        String id = run.createVolume(r, run.runId() + "-" + ticket, source);
        r.call("DeleteVolume", () -> run.session().controller().deleteVolume(
                DeleteVolumeRequest.newBuilder().setVolumeId(id).putAllSecrets(run.secrets()).build()));
        run.ledger().volumes.remove(id);
    }

    private static void snapshot(BenchRun run, Recorder r, String source, long ticket) {
        String name = run.runId() + "-snap-" + ticket;
        CreateSnapshotResponse snap;
        try {
            snap = r.call("CreateSnapshot", () -> run.session().controller().createSnapshot(CreateSnapshotRequest.newBuilder()
                    .setName(name).setSourceVolumeId(source).putAllSecrets(run.secrets()).build()));
        } catch (StatusRuntimeException e) {
            if (BenchRun.mayHaveHappened(e)) run.ledger().uncertainSnapshots.put(name, source);
            throw e;
        }
        String id = snap.getSnapshot().getSnapshotId();
        run.ledger().snapshots.add(id);
        r.call("DeleteSnapshot", () -> run.session().controller().deleteSnapshot(
                DeleteSnapshotRequest.newBuilder().setSnapshotId(id).putAllSecrets(run.secrets()).build()));
        run.ledger().snapshots.remove(id);
    }
}
