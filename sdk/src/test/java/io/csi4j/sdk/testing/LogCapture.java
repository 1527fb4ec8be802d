package io.csi4j.sdk.testing;

import io.csi4j.sdk.OneLineFormatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Captures everything logged under {@code io.csi4j} (formatted as the plugin would print it) while open. */
public final class LogCapture extends Handler implements AutoCloseable {
    private static final Logger ROOT = Logger.getLogger("io.csi4j");
    private final StringBuilder text = new StringBuilder();
    private final OneLineFormatter formatter = new OneLineFormatter();
    private final Level previous;

    public LogCapture(Level level) {
        previous = ROOT.getLevel();
        ROOT.setLevel(level);
        setLevel(Level.ALL);
        ROOT.addHandler(this);
    }

    @Override
    public synchronized void publish(LogRecord record) {
        if (ROOT.isLoggable(record.getLevel())) text.append(formatter.format(record));
    }

    public synchronized String text() {
        return text.toString();
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        ROOT.removeHandler(this);
        ROOT.setLevel(previous);
    }
}
