package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.csi4j.testkit.reference.Flaw;
import io.csi4j.testkit.reference.Options;
import io.csi4j.testkit.reference.ReferencePlugin;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same reference services behind the sdk's PluginServer and its standard interceptors
 * (validation, in-flight guard, ...): the suite and the sdk agree on the spec.
 */
class SdkServedPluginTest {
    /** Held so the level sticks (java.util.logging keeps loggers weakly); one log line per call is noise here. */
    private static final java.util.logging.Logger CALL_LOG = java.util.logging.Logger.getLogger(io.csi4j.sdk.interceptor.CallLogInterceptor.LOGGER);

    @org.junit.jupiter.api.BeforeAll
    static void quiet() {
        CALL_LOG.setLevel(java.util.logging.Level.WARNING);
    }

    @ParameterizedTest
    @EnumSource(AccessType.class)
    void passesBehindTheSdkInterceptors(AccessType access, @TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.startOnSdk(dir, Options.full(), Set.of())) {
            StringBuilder log = new StringBuilder();
            SanityReport report = ReferencePluginConformanceTest.run(ReferencePluginConformanceTest.config(plugin, access).build(), log);
            assertEquals(0, report.failed(), () -> "failures behind the sdk:\n" + log);
            assertEquals("", plugin.leftovers(), log::toString);
        }
    }

    @Test
    void theSdkValidationCoversAHandlerThatForgetsARequiredField(@TempDir Path dir) throws Exception {
        try (ReferencePlugin plugin = ReferencePlugin.startOnSdk(dir, Options.full(), Set.of(Flaw.ACCEPTS_MISSING_NAME))) {
            StringBuilder log = new StringBuilder();
            SanityReport report = ReferencePluginConformanceTest.run(ReferencePluginConformanceTest.config(plugin, AccessType.MOUNT)
                    .focus("/missing ").build(), log);
            assertEquals(0, report.failed(), log::toString);
        }
    }
}
