package io.csi4j.cli;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.csi4j.cli.call.DurationConverter;
import java.io.UncheckedIOException;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;
import io.csi4j.driver.catalog.CatalogException;
import java.time.Duration;

/**
 * How a failed command ends: a plugin's error as {@code CODE: message} (what the plugin said, nothing
 * added), our own as {@code csi4j: message}; exit code 1 either way (2 is picocli's usage error; 3 a
 * catalog the driver refuses to open, with what to do about it).
 * {@code CSI4J_DEBUG=1} adds the stack trace.
 */
final class ErrorReport implements IExecutionExceptionHandler {
    static final int FAILED = 1;
    static final int CATALOG = 3;

    @Override
    public int handleExecutionException(Exception ex, CommandLine cl, CommandLine.ParseResult parsed) {
        var err = cl.getErr();
        switch (ex) {
            // a damaged or missing catalog is the operator's to fix: what and how, in one line (exit 3)
            case CatalogException c -> {
                err.println("csi4j " + cl.getCommandName() + ": " + c.getMessage());
                err.flush();
                return CATALOG;
            }
            case StatusRuntimeException s -> err.println(describe(s.getStatus(), cl));
            case CommandLine.ParameterException p -> {
                err.println("csi4j: " + p.getMessage());
                err.flush();
                return cl.getCommandSpec().exitCodeOnInvalidInput();
            }
            case IllegalArgumentException e -> err.println("csi4j: " + e.getMessage());
            case IllegalStateException e -> err.println("csi4j: " + e.getMessage());
            case UncheckedIOException e -> err.println("csi4j: " + e.getMessage());
            default -> err.println("csi4j: " + ex);
        }
        if ("1".equals(System.getenv("CSI4J_DEBUG"))) ex.printStackTrace(err);
        err.flush();
        return FAILED;
    }

    static String describe(Status status) {
        String message = status.getDescription();
        if ((message == null || message.isBlank() || message.equals("io exception")) && status.getCause() != null) {
            Throwable root = status.getCause();
            while (root.getCause() != null) root = root.getCause();
            message = (message == null || message.isBlank() ? "" : message + ": ") + root.getMessage();
        }
        return status.getCode() + ": " + (message == null ? "" : withoutTransportDetail(message));
    }

    /**
     * As {@link #describe(Status)}, and a deadline the client ran out of (not one a plugin reports) said in words: how
     * long it waited, that the work may go on, and what to do. A restore or clone (create-volume with a source) may be a
     * copy onto another node, which goes on after the CLI gives up.
     */
    static String describe(Status status, CommandLine cl) {
        String text = describe(status);
        if (status.getCode() == Status.Code.UNAVAILABLE && isCopy(cl)) {
            return text + "; a restore or clone onto another node that had started goes on copying between the nodes: "
                    + "the same command again joins it once the plugin answers";
        }
        if (status.getCode() != Status.Code.DEADLINE_EXCEEDED || status.getDescription() == null
                || !CLIENT_DEADLINE.matcher(status.getDescription()).find()) {
            return text;
        }
        var timeout = cl.getCommandSpec().findOption("--timeout");
        String waited = timeout == null || timeout.getValue() == null ? "the --timeout"
                : "--timeout " + DurationConverter.format((Duration) timeout.getValue());
        String said = "DEADLINE_EXCEEDED: no answer within " + waited + "; the plugin may still be at work";
        if (isCopy(cl)) {
            return said + ": a restore or clone onto another node goes on copying (./csi4j cluster status shows its "
                    + "progress); the same command again, with a longer --timeout, joins the copy and waits for it";
        }
        return said + ": a longer --timeout waits for it, and the same command again picks up what it did";
    }

    /** A create-volume with a content source: a restore or clone, which a cluster may make by copying between nodes. */
    private static boolean isCopy(CommandLine cl) {
        var parsed = cl.getParseResult();
        return cl.getCommandName().equals("create-volume") && parsed != null
                && (parsed.hasMatchedOption("--snapshot-id") || parsed.hasMatchedOption("--source-volume-id"));
    }

    /** gRPC's own deadline, as its client words it (a plugin's DEADLINE_EXCEEDED has its own words). */
    private static final Pattern CLIENT_DEADLINE = Pattern.compile("^(ClientCall started after )?(CallOptions )?deadline (was )?exceeded");
    /** What gRPC appends for its own debugging: name resolution delays, stream and connection states. */
    private static final Pattern TRANSPORT_DETAIL = Pattern.compile(
            "\\.?\\s*(Name resolution delay.*|\\[(closed|open|remote_addr|buffered_nanos|wait_for_ready|connecting_and_lb_delay)=.*)$",
            Pattern.DOTALL);

    static String withoutTransportDetail(String message) {
        return TRANSPORT_DETAIL.matcher(message).replaceFirst("").strip();
    }
}
