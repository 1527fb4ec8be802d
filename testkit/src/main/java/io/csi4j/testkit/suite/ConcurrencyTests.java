package io.csi4j.testkit.suite;

import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_SNAPSHOT;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.CREATE_DELETE_VOLUME;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.LIST_SNAPSHOTS;
import static io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type.LIST_VOLUMES;
import static io.csi4j.testkit.suite.Verdicts.check;

import io.csi4j.proto.csi.CreateSnapshotRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A CO that lost state MAY send the same create twice at once: the plugin must still make exactly
 * one object (both calls answer with its id, or one is ABORTED and a retry answers with it).
 */
final class ConcurrencyTests {
    private ConcurrencyTests() {}

    /** One create call that answers an id or an error code. */
    @FunctionalInterface
    interface Create {
        String call();
    }

    record Outcome(String id, Status.Code code, String error) {}

    static List<SanityTest> tests() {
        Catalog c = new Catalog();
        c.add("Controller/CreateVolume/concurrent identical requests create one volume", Requirement.controller(CREATE_DELETE_VOLUME), ctx -> {
            CreateVolumeRequest request = ctx.volumeRequest(ctx.name("concurrent")).build();
            int before = ctx.caps().has(LIST_VOLUMES) ? Listing.all(ctx, Listing.VOLUMES).size() : -1;
            Set<String> ids = race(ctx, "CreateVolume", () -> {
                String id = ctx.controller().createVolume(request).getVolume().getVolumeId();
                ctx.trackVolume(id);
                return id;
            });
            if (before >= 0) {
                int after = Listing.all(ctx, Listing.VOLUMES).size();
                check(after - before == 1, "CreateVolume: the Plugin SHOULD ensure that multiple CreateVolume calls for the same name do not result in more than one piece of storage",
                        () -> (after - before) + " new volumes listed");
            }
            check(ids.size() == 1, "CreateVolume: concurrent calls for one name MUST yield one volume (the same volume_id for every call)", () -> "volume ids " + ids);
        });

        c.add("Controller/CreateSnapshot/concurrent identical requests create one snapshot", Requirement.controller(CREATE_DELETE_VOLUME, CREATE_DELETE_SNAPSHOT), ctx -> {
            String source = ctx.createVolume("concurrent-source").getVolumeId();
            CreateSnapshotRequest request = ctx.snapshotRequest(source, ctx.name("concurrent"));
            int before = ctx.caps().has(LIST_SNAPSHOTS) ? Listing.all(ctx, Listing.SNAPSHOTS).size() : -1;
            Set<String> ids = race(ctx, "CreateSnapshot", () -> {
                String id = ctx.controller().createSnapshot(request).getSnapshot().getSnapshotId();
                ctx.trackSnapshot(id);
                return id;
            });
            if (before >= 0) {
                int after = Listing.all(ctx, Listing.SNAPSHOTS).size();
                check(after - before == 1, "CreateSnapshot: the snapshot MUST only be cut once for one name", () -> (after - before) + " new snapshots listed");
            }
            check(ids.size() == 1, "CreateSnapshot: concurrent calls for one name MUST yield one snapshot (the same snapshot_id for every call)", () -> "snapshot ids " + ids);
        });
        return c.tests();
    }

    /**
     * Sends the create from several threads at once, then retries each ABORTED one until it answers.
     * Returns every id answered; anything but OK or ABORTED is a violation.
     */
    static Set<String> race(TestContext ctx, String rpc, Create create) throws InterruptedException {
        int callers = Math.max(2, ctx.repeats());
        CountDownLatch start = new CountDownLatch(1);
        List<Outcome> outcomes = new ArrayList<>();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Outcome>> futures = new ArrayList<>();
            for (int i = 0; i < callers; i++) {
                futures.add(threads.submit(() -> {
                    start.await();
                    return attempt(create);
                }));
            }
            start.countDown();
            long waitMillis = ctx.config().callTimeout().toMillis() + 5_000;
            for (Future<Outcome> f : futures) {
                try {
                    outcomes.add(f.get(waitMillis, TimeUnit.MILLISECONDS));
                } catch (ExecutionException e) {
                    outcomes.add(new Outcome(null, Status.Code.UNKNOWN, Verdicts.describe(e.getCause())));
                } catch (TimeoutException e) {
                    f.cancel(true);
                    outcomes.add(new Outcome(null, Status.Code.DEADLINE_EXCEEDED, "no answer"));
                }
            }
        }
        Set<String> ids = new LinkedHashSet<>();
        for (Outcome o : outcomes) {
            Outcome settled = o;
            for (int retry = 0; settled.code() == Status.Code.ABORTED && retry < 20; retry++) {
                Thread.sleep(100L << Math.min(retry, 4));
                settled = attempt(create);
            }
            Outcome last = settled;
            check(last.code() == Status.Code.OK,
                    rpc + ": concurrent calls with one name each succeed, or answer ABORTED (operation pending) and succeed on retry",
                    () -> last.code() + (last.error().isEmpty() ? "" : " (" + last.error() + ")"));
            ids.add(last.id());
        }
        return ids;
    }

    private static Outcome attempt(Create create) {
        try {
            return new Outcome(create.call(), Status.Code.OK, "");
        } catch (StatusRuntimeException e) {
            return new Outcome(null, e.getStatus().getCode(), Verdicts.describe(e));
        }
    }
}
