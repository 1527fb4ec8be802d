package io.csi4j.cli.call.h2;

/** A header block that breaks RFC 7541: the connection cannot go on (a COMPRESSION_ERROR). */
final class HpackException extends RuntimeException {
    HpackException(String message) {
        super(message);
    }
}
