package io.csi4j.driver.engine;

import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.ToolException;
import io.csi4j.sdk.CsiException;
import io.grpc.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.function.Supplier;

/**
 * Turns what the OS layer throws into the CSI codes the spec prescribes. The message keeps the
 * call and the path ({@code mount(/dev/loop3 -> /x): EBUSY ...}), prefixed by what we were doing.
 */
final class EngineErrors {
    private EngineErrors() {}

    private static final int EDQUOT = 122;

    /** Runs {@code body}; a CsiException passes through, anything from the OS is translated. */
    static <T> T translate(String doing, Supplier<T> body) {
        try {
            return body.get();
        } catch (CsiException e) {
            throw e;
        } catch (OsException e) {
            throw of(doing, e);
        } catch (UncheckedIOException e) {
            throw of(doing, e.getCause());
        } catch (ToolException e) {
            throw new CsiException(e.reason() == ToolException.Reason.TIMED_OUT ? Status.Code.DEADLINE_EXCEEDED
                    : Status.Code.INTERNAL, doing + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            // a bug or an unexpected state below us: still a CSI answer, with what we were doing
            throw new CsiException(Status.Code.INTERNAL, doing + ": " + e, e);
        }
    }

    static void run(String doing, Runnable body) {
        translate(doing, () -> {
            body.run();
            return null;
        });
    }

    static CsiException of(String doing, OsException e) {
        String message = doing + ": " + e.getMessage();
        return switch (e.errno()) {
            case Errno.ENOSPC, EDQUOT -> new CsiException(Status.Code.RESOURCE_EXHAUSTED, message, e);
            case Errno.ENOENT -> new CsiException(Status.Code.NOT_FOUND, message, e);
            case Errno.EBUSY -> new CsiException(Status.Code.FAILED_PRECONDITION, message, e);
            default -> new CsiException(Status.Code.INTERNAL, message, e);
        };
    }

    /** java.nio reports errno only as text ("No space left on device"). */
    static CsiException of(String doing, IOException e) {
        String message = doing + ": " + e;
        if (e instanceof NoSuchFileException) return new CsiException(Status.Code.NOT_FOUND, message, e);
        if (e instanceof FileSystemException fs && fs.getReason() != null) {
            String reason = fs.getReason();
            if (reason.contains(Errno.describe(Errno.ENOSPC)) || reason.contains(Errno.describe(EDQUOT))) {
                return new CsiException(Status.Code.RESOURCE_EXHAUSTED, message, e);
            }
        }
        return new CsiException(Status.Code.INTERNAL, message, e);
    }

    /** An IOException from java.nio inside engine code, rethrown unchecked (translated by {@link #translate}). */
    static UncheckedIOException unchecked(String what, IOException e) {
        return new UncheckedIOException(what, e);
    }
}
