/**
 * The composition root of the local plugin: {@link io.csi4j.driver.plugin.Driver} opens the pool, the engine and
 * the catalog, runs the reconciler, builds the domain and hands out the services of its mode (CSI, CSI-Addons, the
 * agent's NodeAgent). It sits above every other package and none reads it back, so the package graph has no cycle:
 * what several packages need of the plugin as a whole (its configuration, its version) is in {@code io.csi4j.driver}.
 */
package io.csi4j.driver.plugin;
