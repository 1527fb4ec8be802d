package io.csi4j.sdk.example;

import io.csi4j.proto.csi.ControllerGetCapabilitiesRequest;
import io.csi4j.proto.csi.ControllerGetCapabilitiesResponse;
import io.csi4j.proto.csi.ControllerGrpc;
import io.csi4j.proto.csi.ControllerServiceCapability.RPC.Type;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.csi4j.proto.csi.DeleteVolumeRequest;
import io.csi4j.proto.csi.DeleteVolumeResponse;
import io.csi4j.proto.csi.ListVolumesRequest;
import io.csi4j.proto.csi.ListVolumesResponse;
import io.csi4j.proto.csi.Volume;
import io.csi4j.sdk.CsiException;
import io.csi4j.sdk.capability.Capabilities;
import io.csi4j.sdk.paging.PageTokens;
import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-memory Controller, as a driver author would write one on the sdk. Test hooks, through CreateVolume
 * parameters: {@code slow_ms} (wait that long, or until the call is cancelled; with {@code quiet_cancel} it then
 * returns without answering), {@code fail} (a careless bug
 * that throws with the whole request, secrets included, in its message), {@code bad_response} (a response
 * without volume_id).
 */
public final class ExampleController extends ControllerGrpc.ControllerImplBase {
    private static final long GiB = 1L << 30;

    private final Map<String, Volume> byName = new ConcurrentHashMap<>();
    private final AtomicLong nextId = new AtomicLong(1);
    private final PageTokens pageTokens;

    /** How many times CreateVolume's body ran (to prove coalescing) and how many slow calls saw a cancel. */
    public final AtomicInteger createInvocations = new AtomicInteger();
    public final AtomicInteger cancelsObserved = new AtomicInteger();

    public ExampleController(PageTokens pageTokens) {
        this.pageTokens = pageTokens;
    }

    @Override
    public void createVolume(CreateVolumeRequest request, StreamObserver<CreateVolumeResponse> response) {
        createInvocations.incrementAndGet();
        Map<String, String> parameters = request.getParametersMap();
        if (parameters.containsKey("slow_ms") && !waitOrCancel(Long.parseLong(parameters.get("slow_ms")))) {
            if (parameters.containsKey("quiet_cancel")) return; // gives up without answering: the call stays open
            throw CsiException.aborted("cancelled by the client");
        }
        if (parameters.containsKey("fail")) {
            throw new IllegalStateException("disk exploded while handling " + request);
        }
        if (parameters.containsKey("bad_response")) {
            response.onNext(CreateVolumeResponse.newBuilder().setVolume(Volume.newBuilder().setCapacityBytes(GiB)).build());
            response.onCompleted();
            return;
        }
        long capacity = request.hasCapacityRange() && request.getCapacityRange().getRequiredBytes() > 0
                ? request.getCapacityRange().getRequiredBytes() : GiB;
        Volume volume = byName.computeIfAbsent(request.getName(), name -> Volume.newBuilder()
                .setVolumeId("vol-" + nextId.getAndIncrement())
                .setCapacityBytes(capacity)
                .build());
        if (volume.getCapacityBytes() != capacity) {
            throw CsiException.alreadyExists("volume " + request.getName() + " exists with another capacity");
        }
        response.onNext(CreateVolumeResponse.newBuilder().setVolume(volume).build());
        response.onCompleted();
    }

    @Override
    public void deleteVolume(DeleteVolumeRequest request, StreamObserver<DeleteVolumeResponse> response) {
        byName.values().removeIf(v -> v.getVolumeId().equals(request.getVolumeId()));
        response.onNext(DeleteVolumeResponse.getDefaultInstance());
        response.onCompleted();
    }

    @Override
    public void listVolumes(ListVolumesRequest request, StreamObserver<ListVolumesResponse> response) {
        List<Volume> all = byName.values().stream()
                .sorted((a, b) -> Long.compare(idNumber(a), idNumber(b))).toList();
        long start = pageTokens.decode("volumes", "", request.getStartingToken());
        if (start > all.size()) throw CsiException.aborted("starting_token is past the end of the list");
        int limit = request.getMaxEntries() > 0 ? request.getMaxEntries() : Integer.MAX_VALUE;
        int end = (int) Math.min(all.size(), start + (long) limit);
        var out = ListVolumesResponse.newBuilder();
        for (Volume v : all.subList((int) start, end)) out.addEntries(ListVolumesResponse.Entry.newBuilder().setVolume(v));
        if (end < all.size()) out.setNextToken(pageTokens.encode("volumes", "", end));
        response.onNext(out.build());
        response.onCompleted();
    }

    @Override
    public void controllerGetCapabilities(ControllerGetCapabilitiesRequest request,
                                          StreamObserver<ControllerGetCapabilitiesResponse> response) {
        response.onNext(Capabilities.controller(Type.CREATE_DELETE_VOLUME, Type.LIST_VOLUMES));
        response.onCompleted();
    }

    private static long idNumber(Volume v) {
        return Long.parseLong(v.getVolumeId().substring("vol-".length()));
    }

    /** True when the time passed, false when the call was cancelled first. */
    private boolean waitOrCancel(long millis) {
        CountDownLatch cancelled = new CountDownLatch(1);
        Context context = Context.current();
        Context.CancellationListener listener = c -> cancelled.countDown();
        context.addListener(listener, Runnable::run);
        try {
            if (cancelled.await(millis, TimeUnit.MILLISECONDS)) {
                cancelsObserved.incrementAndGet();
                return false;
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw CsiException.aborted("interrupted");
        } finally {
            context.removeListener(listener);
        }
    }
}
