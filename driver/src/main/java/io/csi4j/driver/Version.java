package io.csi4j.driver;

/**
 * The plugin's version, as GetPluginInfo and the start-up line say it: from the driver jar's manifest, or a
 * development version when run from classes. Here, beside {@link DriverConfig}, so the local driver and the cluster
 * controller both read it without one depending on the other.
 */
public final class Version {
    private Version() {}

    public static String current() {
        String v = Version.class.getPackage().getImplementationVersion();
        return v == null ? "0.1.0-dev" : v;
    }
}
