package io.csi4j.driver.engine;

import java.nio.file.Path;

/** The pool volumes live in: where, on which filesystem, whether it reflinks, how full it is. */
public record PoolInfo(Path path, String filesystem, boolean reflink, long totalBytes, long availableBytes) {}
