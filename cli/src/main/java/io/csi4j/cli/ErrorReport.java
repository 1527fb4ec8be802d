package io.csi4j.cli;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.UncheckedIOException;
import picocli.CommandLine;
import picocli.CommandLine.IExecutionExceptionHandler;

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
            case io.csi4j.driver.catalog.CatalogException c -> {
                err.println("csi4j " + cl.getCommandName() + ": " + c.getMessage());
                err.flush();
                return CATALOG;
            }
            case StatusRuntimeException s -> err.println(describe(s.getStatus()));
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
        return status.getCode() + ": " + (message == null ? "" : message);
    }
}
