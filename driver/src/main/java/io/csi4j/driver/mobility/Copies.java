package io.csi4j.driver.mobility;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/** The copies an agent is making (incoming) or serving (outgoing) now, and what all of them moved so far. */
public final class Copies {
    private final ConcurrentHashMap<Copy, Boolean> running = new ConcurrentHashMap<>();
    private final AtomicLong bytesSent = new AtomicLong();
    private final AtomicLong bytesReceived = new AtomicLong();

    /** One copy: its progress, updated as data moves; closing it takes it off the list. */
    public final class Copy implements AutoCloseable {
        public final String name;
        public final boolean incoming;
        public final String peerNodeId;
        public final String sourceId;
        private final AtomicLong done = new AtomicLong();
        /** Where an incoming copy's time went (its one thread's): waiting for the sender, writing to the pool. */
        long waitedNanos;
        long writingNanos;
        private volatile long total;

        private Copy(String name, boolean incoming, String peerNodeId, String sourceId) {
            this.name = name;
            this.incoming = incoming;
            this.peerNodeId = peerNodeId;
            this.sourceId = sourceId;
        }

        public void total(long bytes) { total = bytes; }

        public long total() { return total; }

        public long done() { return done.get(); }

        public void moved(long bytes) {
            done.addAndGet(bytes);
            (incoming ? bytesReceived : bytesSent).addAndGet(bytes);
        }

        @Override
        public void close() {
            running.remove(this);
        }
    }

    public Copy start(String name, boolean incoming, String peerNodeId, String sourceId) {
        Copy copy = new Copy(name, incoming, peerNodeId, sourceId);
        running.put(copy, true);
        return copy;
    }

    public List<Copy> now() {
        return List.copyOf(running.keySet());
    }

    public long bytesSent() { return bytesSent.get(); }

    public long bytesReceived() { return bytesReceived.get(); }

    /** Copy progress for the metrics endpoint (Prometheus text). */
    public String prometheusText() {
        long in = 0, out = 0, inDone = 0, inTotal = 0;
        for (Copy c : now()) {
            if (c.incoming) {
                in++;
                inDone += c.done();
                inTotal += c.total();
            } else {
                out++;
            }
        }
        return "# HELP csi4j_copies_running Copies of volumes between nodes running now, by direction.\n"
                + "# TYPE csi4j_copies_running gauge\n"
                + "csi4j_copies_running{direction=\"in\"} " + in + "\n"
                + "csi4j_copies_running{direction=\"out\"} " + out + "\n"
                + "# HELP csi4j_copy_incoming_bytes Bytes done and to do of the incoming copies running now.\n"
                + "# TYPE csi4j_copy_incoming_bytes gauge\n"
                + "csi4j_copy_incoming_bytes{of=\"done\"} " + inDone + "\n"
                + "csi4j_copy_incoming_bytes{of=\"total\"} " + inTotal + "\n"
                + "# HELP csi4j_copy_bytes_total Bytes moved by copies between nodes since start, by direction.\n"
                + "# TYPE csi4j_copy_bytes_total counter\n"
                + "csi4j_copy_bytes_total{direction=\"received\"} " + bytesReceived() + "\n"
                + "csi4j_copy_bytes_total{direction=\"sent\"} " + bytesSent() + "\n";
    }
}
