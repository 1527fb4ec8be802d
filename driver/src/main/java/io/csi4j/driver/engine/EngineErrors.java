package io.csi4j.driver.engine;

import io.csi4j.driver.os.Errno;
import io.csi4j.driver.os.OsException;
import io.csi4j.driver.os.ToolException;
import io.csi4j.driver.storage.StorageException;
import io.csi4j.driver.storage.StorageException.Reason;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.function.Supplier;

/**
 * Turns what the OS layer throws into storage failures with a reason (the CSI layer picks the code). The message keeps the
 * call and the path ({@code mount(/dev/loop3 -> /x): EBUSY ...}), prefixed by what we were doing.
 */
public final class EngineErrors {
    private EngineErrors() {}

    private static final int EDQUOT = 122;

    /** Runs {@code body}; a StorageException passes through, anything from the OS is translated. */
    public static <T> T translate(String doing, Supplier<T> body) {
        try {
            return body.get();
        } catch (StorageException e) {
            throw e;
        } catch (OsException e) {
            throw of(doing, e);
        } catch (UncheckedIOException e) {
            throw of(doing, e.getCause());
        } catch (ToolException e) {
            throw new StorageException(e.reason() == ToolException.Reason.TIMED_OUT ? Reason.TIMED_OUT : Reason.FAILED,
                    doing + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            // a bug or an unexpected state below us: still an answer, with what we were doing
            throw new StorageException(Reason.FAILED, doing + ": " + e, e);
        }
    }

    public static void run(String doing, Runnable body) {
        translate(doing, () -> {
            body.run();
            return null;
        });
    }

    public static StorageException of(String doing, OsException e) {
        String message = doing + ": " + e.getMessage();
        return switch (e.errno()) {
            case Errno.ENOSPC, EDQUOT -> new StorageException(Reason.NO_SPACE, message, e);
            case Errno.ENOENT -> new StorageException(Reason.NOT_FOUND, message, e);
            case Errno.EBUSY -> new StorageException(Reason.IN_USE, message, e);
            default -> new StorageException(Reason.FAILED, message, e);
        };
    }

    /** java.nio reports errno only as text ("No space left on device"). */
    public static StorageException of(String doing, IOException e) {
        String message = doing + ": " + e;
        if (e instanceof NoSuchFileException) return new StorageException(Reason.NOT_FOUND, message, e);
        // FileChannel.write reports ENOSPC as a plain IOException whose message is strerror's text
        String reason = e instanceof FileSystemException fs ? fs.getReason() : e.getMessage();
        if (reason != null) {
            if (reason.contains(Errno.describe(Errno.ENOSPC)) || reason.contains(Errno.describe(EDQUOT))) {
                return new StorageException(Reason.NO_SPACE, message, e);
            }
        }
        return new StorageException(Reason.FAILED, message, e);
    }

    /** An IOException from java.nio inside engine code, rethrown unchecked (translated by {@link #translate}). */
    public static UncheckedIOException unchecked(String what, IOException e) {
        return new UncheckedIOException(what, e);
    }
}
