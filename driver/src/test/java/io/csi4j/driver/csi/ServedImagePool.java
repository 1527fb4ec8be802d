package io.csi4j.driver.csi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.driver.testing.ScratchFilesystem;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The socket tests' shared fixture, as a JUnit extension on a static field: one {@link ServedDriver} on its own XFS
 * image pool per test class; per test, a fresh node directory for staging and target paths, and after it the check
 * that it left no mount or loop device (then every volume and snapshot is deleted, so the next test starts empty).
 */
final class ServedImagePool implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {
    private final long poolBytes;
    private ServedDriver served;
    private Path nodeDir;

    private ServedImagePool(long poolBytes) {
        this.poolBytes = poolBytes;
    }

    static ServedImagePool ofBytes(long poolBytes) {
        return new ServedImagePool(poolBytes);
    }

    /** The plugin, its clients and its pool. */
    ServedDriver served() {
        return served;
    }

    /** This test's node directory. */
    Path nodeDir() {
        return nodeDir;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        ScratchFilesystem.require("xfs");
        served = ServedDriver.imagePool(poolBytes);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (served != null) served.close();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        nodeDir = served.nodeDir(context.getDisplayName().replaceAll("[^A-Za-z0-9]", "_"));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        assertEquals(List.of(), served.cleanUp(nodeDir), "the test left mounts or loop devices");
    }
}
