package io.csi4j.driver.os;

import java.util.List;

/** An external program (mkfs, resize2fs ...) that could not be found, failed, or ran too long. */
public final class ToolException extends RuntimeException {

    public enum Reason { NOT_FOUND, FAILED, TIMED_OUT }

    private final Reason reason;
    private final List<String> command;
    private final int exitCode;
    private final String stderr;

    ToolException(Reason reason, List<String> command, int exitCode, String stderr, String message) {
        super(message);
        this.reason = reason;
        this.command = List.copyOf(command);
        this.exitCode = exitCode;
        this.stderr = stderr;
    }

    public Reason reason() { return reason; }

    public List<String> command() { return command; }

    /** The exit status, or -1 when the program did not run to completion. */
    public int exitCode() { return exitCode; }

    public String stderr() { return stderr; }
}
