/**
 * The one JSON codec of the driver and the cli ({@link io.csi4j.driver.json.Json}, on Gson): catalog
 * columns, artifact sidecars, bench reports, secrets files.
 */
package io.csi4j.driver.json;
