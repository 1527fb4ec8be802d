package io.csi4j.cli.call;

import io.csi4j.proto.cluster.AgentStatus;
import io.csi4j.proto.cluster.ClusterStatusGrpc;
import io.csi4j.proto.cluster.Copy;
import io.csi4j.proto.cluster.GetClusterStatusRequest;
import io.csi4j.proto.csi.CreateVolumeRequest;
import io.csi4j.proto.csi.CreateVolumeResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A create-volume with a content source (a restore or clone), which a cluster controller may serve by copying the
 * source onto another node: while the call runs, the copy's progress is read from the controller's cluster status
 * (the agents track every copy by the volume's name) and said on stderr; when the call's deadline passes while the
 * copy still advances, the call is made again, which joins the copy (a retry of the name does), so the command waits
 * as long as the copy runs. Against a plugin that is no cluster controller the status call is unimplemented and this
 * is a plain CreateVolume.
 */
final class CopyWait {
    private CopyWait() {}

    /** How often the progress is read. */
    static final Duration POLL = Duration.ofSeconds(1);

    static CreateVolumeResponse create(Session s, CreateVolumeRequest request, Duration timeout, PrintWriter err) {
        boolean cluster = true;
        long doneAtLastDeadline = -1;
        String said = "";
        while (true) {
            CompletableFuture<CreateVolumeResponse> call = CompletableFuture.supplyAsync(() -> s.controller().createVolume(request),
                    r -> Thread.ofVirtual().start(r));
            while (true) {
                try {
                    return call.get(POLL.toMillis(), TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    if (!cluster) continue;
                    Optional<Progress> p = progress(s, request.getName());
                    if (p == null) {
                        cluster = false;   // not a cluster controller: nothing to follow
                        continue;
                    }
                    if (p.isPresent() && !p.get().line().equals(said)) {
                        said = p.get().line();
                        err.println("csi4j: " + said);
                        err.flush();
                    }
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof StatusRuntimeException failed)) throw new IllegalStateException(e.getCause());
                    if (!cluster || !clientDeadline(failed.getStatus())) throw failed;
                    Optional<Progress> p = progress(s, request.getName());
                    // the copy goes on and moved since the last deadline (or is syncing its last bytes): call again, which
                    // joins it; a copy that stands still ends the wait with the deadline's own line
                    if (p == null || p.isEmpty() || (p.get().done() <= doneAtLastDeadline && !p.get().finishing())) throw failed;
                    doneAtLastDeadline = p.get().done();
                    err.println("csi4j: no answer within --timeout " + DurationConverter.format(timeout) + " and the copy goes on ("
                            + p.get().amounts() + "): calling again, which joins it");
                    err.flush();
                    break;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for CreateVolume", e);
                }
            }
        }
    }

    /** An incoming copy of the volume named so, on the node that makes it. */
    record Progress(String node, Copy copy) {
        long done() { return copy.getBytesDone(); }

        /** Every byte moved: what is left is the check, the sync and the commit. */
        boolean finishing() { return copy.getBytesTotal() > 0 && copy.getBytesDone() >= copy.getBytesTotal(); }

        String amounts() {
            if (copy.getBytesTotal() <= 0) return human(copy.getBytesDone()) + " copied";
            return human(copy.getBytesDone()) + " of " + human(copy.getBytesTotal()) + String.format(Locale.ROOT,
                    ", %d%%", copy.getBytesDone() * 100 / copy.getBytesTotal());
        }

        String line() {
            return "copying " + copy.getSourceId() + " from " + copy.getPeerNodeId() + " to " + node + ": " + amounts();
        }
    }

    /** 1.5Gi, 12.0Mi, 512B: a progress amount, one decimal. */
    static String human(long bytes) {
        String[] units = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
        if (bytes < 1024) return bytes + "B";
        double value = bytes;
        int unit = -1;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return String.format(Locale.ROOT, "%.1f%s", value, units[unit]);
    }

    /** The copy for this name; empty when none runs; null when the plugin is no cluster controller. */
    static Optional<Progress> progress(Session s, String name) {
        try {
            var status = s.call(ClusterStatusGrpc.getGetClusterStatusMethod(), GetClusterStatusRequest.getDefaultInstance());
            for (AgentStatus a : status.getAgentsList()) {
                for (Copy c : a.getCopiesList()) {
                    if (c.getIncoming() && c.getName().equals(name)) return Optional.of(new Progress(a.getNodeId(), c));
                }
            }
            return Optional.empty();
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode() == Status.Code.UNIMPLEMENTED ? null : Optional.empty();
        }
    }

    /** The client's own deadline (a plugin's DEADLINE_EXCEEDED has words of its own). */
    private static boolean clientDeadline(Status status) {
        return status.getCode() == Status.Code.DEADLINE_EXCEEDED && status.getDescription() != null
                && status.getDescription().matches("(?s)^(ClientCall started after )?(CallOptions )?deadline (was )?exceeded.*");
    }
}
