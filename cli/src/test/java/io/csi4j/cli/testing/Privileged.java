package io.csi4j.cli.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Guards tests that need root, loop devices or mount. Outside CI they are skipped when the machine
 * cannot run them; with CI=true they fail instead, so a green CI never hides a skipped kernel test.
 */
public final class Privileged {
    private Privileged() {}

    public static boolean inCi() {
        return "true".equalsIgnoreCase(System.getenv("CI"));
    }

    public static void requireRoot() {
        require(isRoot(), "test needs root (uid 0)");
    }

    public static void require(boolean condition, String why) {
        if (condition) return;
        if (inCi()) fail("CI=true and this test cannot run: " + why);
        assumeTrue(false, why);
    }

    public static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }
}
