package io.csi4j.driver.engine;

/**
 * The engines there are; {@code engine.open.Engines#open} is the one way one is opened (serve, fsck and the demo
 * alike). It lives in a package of its own because it names {@code engine.image}, which depends on this one.
 */
public enum EngineKind {
    IMAGE, DIR
}
