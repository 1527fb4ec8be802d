/**
 * The CLI's one-shot gRPC client for UNIX sockets: a unary call as one HTTP/2 exchange (RFC 9113) on a connection of
 * its own, blocking in the calling thread, with HPACK (RFC 7541, Huffman decoding included) and gRPC's
 * length-prefixed messages and status trailers. It exists for start-up time: a CLI command is one or a few calls, and
 * grpc-java's Netty channel (event loop, pipeline, name resolution, load balancing) cost a third of a command's CPU.
 * {@link io.csi4j.cli.call.h2.DirectChannel} is an {@code io.grpc.Channel}, so the generated stubs, interceptors and
 * error handling are grpc-java's; it gives the statuses grpc-java gives for the same events (DirectChannelTest makes
 * each call both ways). Streams, TCP and everything long-lived (bench, demo, serve) stay on grpc-java.
 */
package io.csi4j.cli.call.h2;
