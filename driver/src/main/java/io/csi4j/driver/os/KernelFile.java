package io.csi4j.driver.os;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Reads a small file the kernel makes up as it is read (sysfs attributes, /proc tables): open, read to the
 * end, close. DeleteVolume scans the loop devices twice per call; {@code Files.readString} costs half as much
 * again in C1-compiled channel and decoder code as the three syscalls themselves (bench/README.md).
 */
final class KernelFile {
    private KernelFile() {}

    /** The whole content; NoSuchFileException when the file is absent, as {@code Files.readString} throws. */
    static String read(Path path) throws IOException {
        try (FileInputStream in = new FileInputStream(path.toString())) {
            byte[] buf = new byte[512];   // an attribute is a line (a backing file's path); a table grows the buffer
            int length = 0;
            for (int n; (n = in.read(buf, length, buf.length - length)) > 0; ) {
                length += n;
                if (length == buf.length) buf = Arrays.copyOf(buf, buf.length * 2);
            }
            return new String(buf, 0, length, UTF_8);
        } catch (FileNotFoundException e) {
            // ENOENT at open is absence even when the path exists again by now: a loop device detached and bound
            // anew by another process between the open and a second look (seen under machine-wide loop churn)
            String why = e.getMessage() == null ? "" : e.getMessage();
            if (why.endsWith("(No such file or directory)") || Files.notExists(path)) throw new NoSuchFileException(path.toString());
            throw e;
        }
    }
}
