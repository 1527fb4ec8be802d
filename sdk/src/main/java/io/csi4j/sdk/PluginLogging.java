package io.csi4j.sdk;

import java.io.PrintStream;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.StreamHandler;

/**
 * Sends java.util.logging to standard error, one line per record (the CSI spec asks plugins to log to
 * stdout/stderr only). {@code debug} turns on the redacted request/response lines of the call log.
 */
public final class PluginLogging {
    private PluginLogging() {}

    // JUL keeps loggers weakly: hold the ones we configure or their level is lost
    private static final Logger GRPC = Logger.getLogger("io.grpc");
    private static final Logger NETTY = Logger.getLogger("io.netty");

    public static void install(Level level) {
        install(level, System.err);
    }

    public static void install(Level level, PrintStream out) {
        LogManager.getLogManager().reset();
        Logger root = Logger.getLogger("");
        root.setLevel(level);
        Handler handler = new StreamHandler(out, new OneLineFormatter()) {
            @Override
            public synchronized void publish(LogRecord record) {
                super.publish(record);
                flush();
            }
        };
        handler.setLevel(Level.ALL);
        root.addHandler(handler);
        // transport internals are noisy at debug level and say nothing about CSI calls
        Level transport = level.intValue() > Level.INFO.intValue() ? level : Level.INFO;
        GRPC.setLevel(transport);
        NETTY.setLevel(transport);
    }
}
