package io.csi4j.driver;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The plugin's version and the commit it was built from, as GetPluginInfo, the start-up line and {@code --version}
 * say them: from {@code build.properties}, which the build writes (driver/src/build/BuildInfo.java). Here, beside
 * {@link DriverConfig}, so the local driver and the cluster controller both read it without one depending on the
 * other.
 */
public final class Version {
    private Version() {}

    /** The project's version ({@code 0.1.0-SNAPSHOT}, as the image is tagged), or "unknown" without build.properties. */
    public static String current() {
        return BuildInfo.PROPERTIES.getProperty("version", "unknown");
    }

    /** The git commit the build was made from (12 hex digits, "-dirty" with local changes), or "unknown". */
    public static String commit() {
        return BuildInfo.PROPERTIES.getProperty("commit", "unknown");
    }

    /** Read once, when first asked. */
    private static final class BuildInfo {
        static final Properties PROPERTIES = load();

        private static Properties load() {
            var properties = new Properties();
            try (InputStream in = Version.class.getResourceAsStream("build.properties")) {
                if (in != null) properties.load(in);
            } catch (IOException e) {
                // an unreadable resource is as good as none: "unknown"
            }
            return properties;
        }
    }
}
