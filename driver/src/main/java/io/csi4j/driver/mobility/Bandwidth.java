package io.csi4j.driver.mobility;

import java.util.concurrent.locks.LockSupport;

/**
 * A token bucket over the bytes an agent moves for copies (sent and received together), so a copy cannot starve the
 * node's workloads of disk and network: at most {@code bytesPerSecond} on average, bursts of at most one second's
 * worth. Zero means no limit.
 */
public final class Bandwidth {
    private final long bytesPerSecond;
    private long available;
    private long refilledAt = System.nanoTime();

    public Bandwidth(long bytesPerSecond) {
        if (bytesPerSecond < 0) throw new IllegalArgumentException("bandwidth must be >= 0: " + bytesPerSecond);
        this.bytesPerSecond = bytesPerSecond;
        this.available = bytesPerSecond;
    }

    public static Bandwidth unlimited() {
        return new Bandwidth(0);
    }

    public long bytesPerSecond() { return bytesPerSecond; }

    /** Waits until {@code bytes} may move (they count against the bucket at once; the debt is slept off). */
    public void take(long bytes) {
        if (bytesPerSecond == 0 || bytes <= 0) return;
        long waitNanos;
        synchronized (this) {
            long now = System.nanoTime();
            long earned = (long) ((now - refilledAt) / 1e9 * bytesPerSecond);
            if (earned > 0) {
                available = Math.min(bytesPerSecond, available + earned);
                refilledAt = now;
            }
            available -= bytes;
            waitNanos = available >= 0 ? 0 : (long) (-available * 1e9 / bytesPerSecond);
        }
        if (waitNanos > 0) LockSupport.parkNanos(waitNanos);
        if (Thread.interrupted()) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for bandwidth", new InterruptedException());
        }
    }

    /** Parses 0, 123, 100k, 50M, 1G (bytes per second, powers of 1024). */
    public static long parse(String text) {
        String t = text.trim();
        if (t.isEmpty()) throw new IllegalArgumentException("empty bandwidth");
        char unit = Character.toUpperCase(t.charAt(t.length() - 1));
        long factor = switch (unit) {
            case 'K' -> 1L << 10;
            case 'M' -> 1L << 20;
            case 'G' -> 1L << 30;
            default -> 1;
        };
        String number = factor == 1 ? t : t.substring(0, t.length() - 1);
        long value = Long.parseLong(number);
        if (value < 0) throw new IllegalArgumentException("negative bandwidth: " + text);
        return Math.multiplyExact(value, factor);
    }

    @Override
    public String toString() {
        return bytesPerSecond == 0 ? "unlimited" : bytesPerSecond + " bytes/s";
    }

}
