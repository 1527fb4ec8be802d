package io.csi4j.cli.output;

/** {@code -o}: a readable table for people, JSON or YAML (proto field names) for scripts. */
public enum OutputFormat { TABLE, JSON, YAML }
