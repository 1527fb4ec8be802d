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
}
