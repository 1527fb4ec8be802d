package io.csi4j.sdk.testing;

import io.csi4j.sdk.OneLineFormatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Captures every log record of the JVM (formatted as the plugin prints them) while open, with the sdk's loggers
 * at {@code level} and gRPC/Netty at INFO, as {@link io.csi4j.sdk.PluginLogging} configures a plugin.
 */
public final class LogCapture extends Handler implements AutoCloseable {
    private static final Logger ROOT = Logger.getLogger("");
    private static final Logger SDK = Logger.getLogger("io.csi4j");
    private static final Logger GRPC = Logger.getLogger("io.grpc");
    private static final Logger NETTY = Logger.getLogger("io.netty");
    private final StringBuilder text = new StringBuilder();
    private final OneLineFormatter formatter = new OneLineFormatter();
    private final Level previous;

    public LogCapture(Level level) {
        previous = SDK.getLevel();
        SDK.setLevel(level);
        GRPC.setLevel(Level.INFO);
        NETTY.setLevel(Level.INFO);
        setLevel(Level.ALL);
        ROOT.addHandler(this);
    }

    @Override
    public synchronized void publish(LogRecord record) {
        text.append(formatter.format(record));
        // the formatter prints only the type of an attached exception: keep its message too, to check it
        if (record.getThrown() != null) text.append("THROWN: ").append(record.getThrown()).append('\n');
    }

    public synchronized String text() {
        return text.toString();
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        ROOT.removeHandler(this);
        SDK.setLevel(previous);
    }
}
