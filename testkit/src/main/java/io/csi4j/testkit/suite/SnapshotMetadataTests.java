package io.csi4j.testkit.suite;

import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME;
import static io.csi4j.testkit.suite.Verdicts.fails;
import static io.csi4j.testkit.suite.Verdicts.ok;

import io.csi4j.proto.csi.BlockMetadata;
import io.csi4j.proto.csi.BlockMetadataType;
import io.csi4j.proto.csi.GetMetadataAllocatedRequest;
import io.csi4j.proto.csi.GetMetadataDeltaRequest;
import io.csi4j.proto.csi.PluginCapability;
import io.csi4j.proto.csi.Snapshot;
import io.csi4j.proto.csi.Volume;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import io.csi4j.proto.csi.GetMetadataAllocatedResponse;
import io.csi4j.proto.csi.GetMetadataDeltaResponse;

/**
 * The SnapshotMetadata service, for a plugin that advertises SNAPSHOT_METADATA_SERVICE: the stream rules of
 * the spec (one block_metadata_type and one volume_capacity_bytes per stream, at most max_results tuples a
 * message, tuples ascending without overlap, none ending before starting_offset, FIXED_LENGTH sizes constant)
 * and its error rows. Snapshots are cut of freshly created volumes: what they hold is the plugin's business,
 * how it is reported is the spec's.
 */
final class SnapshotMetadataTests {
    private SnapshotMetadataTests() {}

    static final Requirement METADATA = Requirement.custom("plugin capability SNAPSHOT_METADATA_SERVICE",
            (caps, k) -> caps.has(PluginCapability.Service.Type.SNAPSHOT_METADATA_SERVICE))
            .and(Requirement.controller(CREATE_DELETE_VOLUME, CREATE_DELETE_SNAPSHOT));

    /** One stream, read to its end. */
    record Stream(BlockMetadataType type, long capacity, List<List<BlockMetadata>> messages) {
        List<BlockMetadata> tuples() {
            return messages.stream().flatMap(List::stream).toList();
        }
    }

    static Stream allocated(TestContext ctx, String snapshotId, long from, int max) {
        Iterator<GetMetadataAllocatedResponse> it = ctx.snapshotMetadata().getMetadataAllocated(
                GetMetadataAllocatedRequest.newBuilder().setSnapshotId(snapshotId).setStartingOffset(from).setMaxResults(max)
                        .putAllSecrets(ctx.secrets()).build());
        List<Object[]> raw = new ArrayList<>();
        it.forEachRemaining(m -> raw.add(new Object[] {m.getBlockMetadataType(), m.getVolumeCapacityBytes(), m.getBlockMetadataList()}));
        return read("GetMetadataAllocated", raw, from, max);
    }

    static Stream delta(TestContext ctx, String base, String target, long from, int max) {
        Iterator<GetMetadataDeltaResponse> it = ctx.snapshotMetadata().getMetadataDelta(
                GetMetadataDeltaRequest.newBuilder().setBaseSnapshotId(base).setTargetSnapshotId(target).setStartingOffset(from)
                        .setMaxResults(max).putAllSecrets(ctx.secrets()).build());
        List<Object[]> raw = new ArrayList<>();
        it.forEachRemaining(m -> raw.add(new Object[] {m.getBlockMetadataType(), m.getVolumeCapacityBytes(), m.getBlockMetadataList()}));
        return read("GetMetadataDelta", raw, from, max);
    }

    @SuppressWarnings("unchecked")
    private static Stream read(String rpc, List<Object[]> raw, long from, int max) {
        BlockMetadataType type = raw.isEmpty() ? BlockMetadataType.UNKNOWN : (BlockMetadataType) raw.getFirst()[0];
        long capacity = raw.isEmpty() ? 0 : (long) raw.getFirst()[1];
        List<List<BlockMetadata>> messages = new ArrayList<>();
        long previousEnd = Long.MIN_VALUE;
        long fixedSize = -1;
        boolean first = true;
        for (Object[] m : raw) {
            BlockMetadataType t = (BlockMetadataType) m[0];
            long c = (long) m[1];
            List<BlockMetadata> tuples = (List<BlockMetadata>) m[2];
            Verdicts.check(t == BlockMetadataType.FIXED_LENGTH || t == BlockMetadataType.VARIABLE_LENGTH,
                    rpc + "Response.block_metadata_type is REQUIRED", () -> t.toString());
            Verdicts.check(t == type, rpc + "Response.block_metadata_type MUST be the same in all messages of the stream",
                    () -> t + " after " + type);
            Verdicts.check(c == capacity, rpc + "Response.volume_capacity_bytes MUST be the same in all messages of the stream",
                    () -> c + " after " + capacity);
            Verdicts.check(c > 0, rpc + "Response.volume_capacity_bytes is REQUIRED: the capacity of the underlying volume",
                    () -> Long.toString(c));
            if (max > 0) {
                Verdicts.check(tuples.size() <= max, rpc + ": with max_results > 0 a message MUST hold at most max_results tuples",
                        () -> tuples.size() + " tuples with max_results " + max);
            }
            for (BlockMetadata b : tuples) {
                long end = b.getByteOffset() + b.getSizeBytes();
                long prev = previousEnd;
                Verdicts.check(b.getSizeBytes() > 0, "BlockMetadata.size_bytes MUST be greater than zero", () -> Verdicts.oneLine(b));
                Verdicts.check(b.getByteOffset() >= prev, rpc + ": tuples MUST be strictly increasing and MUST NOT overlap, also across messages",
                        () -> Verdicts.oneLine(b) + " after a tuple ending at " + prev);
                if (first) {
                    Verdicts.check(from < end, rpc + ": the first tuple MUST NOT end before starting_offset (S < B0.byte_offset + B0.size_bytes)",
                            () -> Verdicts.oneLine(b) + " for starting_offset " + from);
                    first = false;
                }
                if (type == BlockMetadataType.FIXED_LENGTH) {
                    long expected = fixedSize < 0 ? b.getSizeBytes() : fixedSize;
                    Verdicts.check(b.getSizeBytes() == expected, rpc + ": FIXED_LENGTH: size_bytes MUST be constant",
                            () -> b.getSizeBytes() + " after " + expected);
                    fixedSize = expected;
                }
                previousEnd = end;
            }
            messages.add(tuples);
        }
        return new Stream(type, capacity, messages);
    }

    private static Snapshot snapshotOfNewVolume(TestContext ctx, String what) throws InterruptedException {
        Volume v = ctx.createVolume(what + "-source");
        return SnapshotTests.readySnapshot(ctx, v.getVolumeId(), what);
    }

    static List<SanityTest> tests() {
        Catalog c = new Catalog();
        String a = "SnapshotMetadata/GetMetadataAllocated";
        String d = "SnapshotMetadata/GetMetadataDelta";

        c.add(a + "/streams tuples by the spec's rules", METADATA, ctx -> {
            Snapshot s = snapshotOfNewVolume(ctx, "cbt");
            Stream all = ok("GetMetadataAllocated MUST succeed for an existing snapshot", () -> allocated(ctx, s.getSnapshotId(), 0, 0));
            ok("GetMetadataAllocated MUST succeed with max_results 1", () -> allocated(ctx, s.getSnapshotId(), 0, 1));
            ok("GetMetadataAllocated MUST succeed with a large max_results", () -> allocated(ctx, s.getSnapshotId(), 0, Integer.MAX_VALUE));
        });

        c.add(a + "/starting_offset is respected", METADATA, ctx -> {
            Snapshot s = snapshotOfNewVolume(ctx, "cbt");
            Stream all = ok("GetMetadataAllocated MUST succeed for an existing snapshot", () -> allocated(ctx, s.getSnapshotId(), 0, 0));
            long from = all.tuples().isEmpty() ? all.capacity() / 2
                    : all.tuples().getFirst().getByteOffset() + all.tuples().getFirst().getSizeBytes() / 2;
            ok("GetMetadataAllocated MUST succeed for a starting_offset inside the volume", () -> allocated(ctx, s.getSnapshotId(), from, 0));
        });

        c.add(a + "/an unknown snapshot fails with NOT_FOUND", METADATA, ctx ->
                fails(Status.Code.NOT_FOUND, "GetMetadataAllocated: an invalid snapshot_id MUST fail with NOT_FOUND",
                        () -> allocated(ctx, ctx.name("no-such-snapshot"), 0, 0)));
        c.add(a + "/a missing snapshot_id fails with INVALID_ARGUMENT", METADATA, ctx ->
                fails(Status.Code.INVALID_ARGUMENT, "GetMetadataAllocated: snapshot_id is REQUIRED; a missing argument MUST fail with INVALID_ARGUMENT",
                        () -> allocated(ctx, "", 0, 0)));
        c.add(a + "/a negative starting_offset fails with OUT_OF_RANGE", METADATA, ctx -> {
            Snapshot s = snapshotOfNewVolume(ctx, "cbt");
            fails(Status.Code.OUT_OF_RANGE, "GetMetadataAllocated: a negative starting_offset MUST fail with OUT_OF_RANGE",
                    () -> allocated(ctx, s.getSnapshotId(), -1, 0));
        });
        c.add(a + "/a starting_offset past the volume fails with OUT_OF_RANGE", METADATA, ctx -> {
            Snapshot s = snapshotOfNewVolume(ctx, "cbt");
            Stream all = ok("GetMetadataAllocated MUST succeed for an existing snapshot", () -> allocated(ctx, s.getSnapshotId(), 0, 0));
            long past = all.capacity() > 0 ? all.capacity() + 1 : Long.MAX_VALUE;
            fails(Status.Code.OUT_OF_RANGE, "GetMetadataAllocated: a starting_offset that exceeds the volume size MUST fail with OUT_OF_RANGE",
                    () -> allocated(ctx, s.getSnapshotId(), past, 0));
        });

        c.add(d + "/streams tuples by the spec's rules", METADATA, ctx -> {
            Volume v = ctx.createVolume("cbt-source");
            Snapshot base = SnapshotTests.readySnapshot(ctx, v.getVolumeId(), "cbt-base");
            Snapshot target = SnapshotTests.readySnapshot(ctx, v.getVolumeId(), "cbt-target");
            ok("GetMetadataDelta MUST succeed for two snapshots of one volume", () -> delta(ctx, base.getSnapshotId(), target.getSnapshotId(), 0, 0));
            ok("GetMetadataDelta MUST succeed with max_results 1", () -> delta(ctx, base.getSnapshotId(), target.getSnapshotId(), 0, 1));
        });
        c.add(d + "/an unknown snapshot fails with NOT_FOUND", METADATA, ctx -> {
            Snapshot s = snapshotOfNewVolume(ctx, "cbt");
            fails(Status.Code.NOT_FOUND, "GetMetadataDelta: an invalid target_snapshot_id MUST fail with NOT_FOUND",
                    () -> delta(ctx, s.getSnapshotId(), ctx.name("no-such-snapshot"), 0, 0));
            fails(Status.Code.NOT_FOUND, "GetMetadataDelta: an invalid base_snapshot_id MUST fail with NOT_FOUND",
                    () -> delta(ctx, ctx.name("no-such-snapshot"), s.getSnapshotId(), 0, 0));
        });
        c.add(d + "/a missing snapshot id fails with INVALID_ARGUMENT", METADATA, ctx -> {
            Snapshot s = snapshotOfNewVolume(ctx, "cbt");
            fails(Status.Code.INVALID_ARGUMENT, "GetMetadataDelta: base_snapshot_id is REQUIRED; a missing argument MUST fail with INVALID_ARGUMENT",
                    () -> delta(ctx, "", s.getSnapshotId(), 0, 0));
            fails(Status.Code.INVALID_ARGUMENT, "GetMetadataDelta: target_snapshot_id is REQUIRED; a missing argument MUST fail with INVALID_ARGUMENT",
                    () -> delta(ctx, s.getSnapshotId(), "", 0, 0));
        });
        c.add(d + "/a negative starting_offset fails with OUT_OF_RANGE", METADATA, ctx -> {
            Volume v = ctx.createVolume("cbt-source");
            Snapshot base = SnapshotTests.readySnapshot(ctx, v.getVolumeId(), "cbt-base");
            Snapshot target = SnapshotTests.readySnapshot(ctx, v.getVolumeId(), "cbt-target");
            fails(Status.Code.OUT_OF_RANGE, "GetMetadataDelta: a negative starting_offset MUST fail with OUT_OF_RANGE",
                    () -> delta(ctx, base.getSnapshotId(), target.getSnapshotId(), -1, 0));
        });
        return c.tests();
    }
}
