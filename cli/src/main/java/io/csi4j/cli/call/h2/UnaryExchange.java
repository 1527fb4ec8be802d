package io.csi4j.cli.call.h2;

import java.util.Arrays;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URLDecoder;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One gRPC unary call on a connection of its own over a UNIX domain socket, blocking, in the calling thread: the
 * HTTP/2 (RFC 9113) a one-shot client needs, without an event loop. Stream 1 carries the call; the connection ends
 * with it. What it reads: SETTINGS (acknowledged; the peer's window and frame size obeyed), PING (answered),
 * WINDOW_UPDATE, HEADERS and CONTINUATION (HPACK), DATA, RST_STREAM, GOAWAY. Our receive windows are opened to the
 * maximum at the start, so a response of any size needs no WINDOW_UPDATE from us.
 */
public final class UnaryExchange {
    /** How a call ended: a gRPC status code and message, the response message on OK, the local failure if any. */
    public record Outcome(int code, String message, byte[] response, Exception cause) {
        static Outcome ok(byte[] response) {
            return new Outcome(0, null, response, null);
        }

        static Outcome failed(int code, String message) {
            return new Outcome(code, message, null, null);
        }
    }

    static final int OK = 0, CANCELLED = 1, UNKNOWN = 2, DEADLINE_EXCEEDED = 4, UNIMPLEMENTED = 12, INTERNAL = 13,
            UNAVAILABLE = 14, RESOURCE_EXHAUSTED = 8, PERMISSION_DENIED = 7, UNAUTHENTICATED = 16;

    static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    static final int DATA = 0, HEADERS = 1, PRIORITY = 2, RST_STREAM = 3, SETTINGS = 4, PUSH_PROMISE = 5, PING = 6,
            GOAWAY = 7, WINDOW_UPDATE = 8, CONTINUATION = 9;
    static final int END_STREAM = 0x1, ACK = 0x1, END_HEADERS = 0x4, PADDED = 0x8, PRIORITY_FLAG = 0x20;
    private static final int DEFAULT_WINDOW = 65_535, MAX_WINDOW = Integer.MAX_VALUE, DEFAULT_FRAME = 16_384;
    /** The largest frame we accept: our SETTINGS_MAX_FRAME_SIZE is the default. */
    private static final int MAX_FRAME_IN = DEFAULT_FRAME;
    private static final int STREAM = 1;
    /** SETTINGS_MAX_HEADER_LIST_SIZE: grpc-java's default maxInboundMetadataSize. */
    static final int MAX_HEADER_LIST = 8192;

    private final SocketChannel channel;
    private final Hpack hpack = new Hpack();
    private final int maxResponse;
    private final ByteBuffer header = ByteBuffer.allocate(9);
    private long connectionSendWindow = DEFAULT_WINDOW;
    private long streamSendWindow = DEFAULT_WINDOW;
    private int peerInitialWindow = DEFAULT_WINDOW;
    private int peerMaxFrame = DEFAULT_FRAME;

    private UnaryExchange(SocketChannel channel, int maxResponse) {
        this.channel = channel;
        this.maxResponse = maxResponse;
    }

    /**
     * Calls {@code /method} at the socket {@code path} with a serialized request; {@code headers} are added after the
     * pseudo-headers (lower-case ASCII names). {@code maxResponse} bounds the response message, as gRPC's
     * maxInboundMessageSize. Deadlines are the caller's: it closes {@code channel} from elsewhere to stop a call.
     */
    public static Outcome call(SocketChannel channel, String method, byte[] request, List<Map.Entry<String, String>> headers,
            int maxResponse) throws IOException {
        return new UnaryExchange(channel, maxResponse).run(method, request, headers);
    }

    /** Opens a blocking connection to a UNIX domain socket. */
    public static SocketChannel connect(Path path) throws IOException {
        return SocketChannel.open(UnixDomainSocketAddress.of(path));
    }

    private Outcome run(String method, byte[] request, List<Map.Entry<String, String>> extra) throws IOException {
        var start = new ByteArrayOutputStream();
        start.writeBytes(PREFACE);
        // SETTINGS: no push, the largest stream window, grpc-java's header list bound; then the connection window to
        // the largest too
        writeFrame(start, SETTINGS, 0, 0, settings(2, 0, 4, MAX_WINDOW, 6, MAX_HEADER_LIST));
        writeFrame(start, WINDOW_UPDATE, 0, 0, int32(MAX_WINDOW - DEFAULT_WINDOW));
        var fields = new ArrayList<Map.Entry<String, String>>(List.of(Map.entry(":method", "POST"),
                Map.entry(":scheme", "http"), Map.entry(":path", "/" + method), Map.entry(":authority", "localhost"),
                Map.entry("content-type", "application/grpc"), Map.entry("te", "trailers")));
        fields.addAll(extra);
        writeHeaders(start, Hpack.encode(fields));
        write(start.toByteArray());

        // the request as one length-prefixed message, in DATA frames the peer's windows and frame size allow
        byte[] message = new byte[5 + request.length];
        ByteBuffer.wrap(message, 1, 4).putInt(request.length);
        System.arraycopy(request, 0, message, 5, request.length);
        int sent = 0;
        var response = new Response();
        while (sent < message.length) {
            long room = Math.min(Math.min(connectionSendWindow, streamSendWindow), peerMaxFrame);
            if (room <= 0) {
                if (!readFrame(response)) return response.outcome(maxResponse);   // the stream ended early
                continue;
            }
            int n = (int) Math.min(room, message.length - sent);
            var frame = new ByteArrayOutputStream(9 + n);
            writeFrame(frame, DATA, sent + n == message.length ? END_STREAM : 0, STREAM,
                    Arrays.copyOfRange(message, sent, sent + n));
            write(frame.toByteArray());
            sent += n;
            connectionSendWindow -= n;
            streamSendWindow -= n;
        }
        while (readFrame(response)) {
            // until the stream ends
        }
        return response.outcome(maxResponse);
    }

    /** What stream 1 brought: headers, the messages' bytes, trailers, or a reset. */
    private final class Response {
        List<Hpack.Field> headers;
        List<Hpack.Field> trailers;
        final ByteArrayOutputStream body = new ByteArrayOutputStream();
        Outcome failure;
        boolean ended;

        Outcome outcome(int max) {
            if (failure != null) return failure;
            if (headers == null) return Outcome.failed(INTERNAL, "the stream ended without headers");
            String status = value(headers, ":status");
            if (trailers == null) {
                // trailers-only: the headers carry the status
                if (value(headers, "grpc-status") != null) return grpcStatus(headers);
                if (!"200".equals(status)) return httpStatus(status);
                return Outcome.failed(INTERNAL, "the stream ended without trailers");
            }
            if (!"200".equals(status)) return httpStatus(status);
            String type = value(headers, "content-type");
            if (type == null || !type.startsWith("application/grpc")) return httpStatus(status);
            var done = grpcStatus(trailers);
            if (done.code() != OK) return done;
            return message(body.toByteArray(), max);
        }
    }

    /** The single message of a unary response, from the length-prefixed stream of DATA. */
    private static Outcome message(byte[] bytes, int max) {
        if (bytes.length == 0) return Outcome.failed(INTERNAL, "No value received for unary call");
        if (bytes.length < 5) return Outcome.failed(INTERNAL, "a truncated message");
        if (bytes[0] != 0) return Outcome.failed(INTERNAL, "a compressed message, though none was accepted");
        long length = ByteBuffer.wrap(bytes, 1, 4).getInt() & 0xffffffffL;
        if (length > max) {
            return Outcome.failed(RESOURCE_EXHAUSTED, "gRPC message exceeds maximum size " + max + ": " + length);
        }
        if (bytes.length < 5 + length) return Outcome.failed(INTERNAL, "a truncated message");
        if (bytes.length > 5 + length) return Outcome.failed(INTERNAL, "More than one value received for unary call");
        return Outcome.ok(Arrays.copyOfRange(bytes, 5, bytes.length));
    }

    private static Outcome grpcStatus(List<Hpack.Field> fields) {
        String code = value(fields, "grpc-status");
        if (code == null) return Outcome.failed(UNKNOWN, "missing GRPC status in response");
        int c;
        try {
            c = Integer.parseInt(code);
        } catch (NumberFormatException e) {
            return Outcome.failed(UNKNOWN, "invalid grpc-status: " + code);
        }
        if (c < 0 || c > 16) return Outcome.failed(UNKNOWN, "Unknown code " + code);
        String message = value(fields, "grpc-message");
        return new Outcome(c, message == null ? null : percentDecoded(message), null, null);
    }

    /** A non-gRPC answer: the code the gRPC HTTP mapping gives its HTTP status. */
    private static Outcome httpStatus(String status) {
        int code = switch (status == null ? "" : status) {
            case "400" -> INTERNAL;
            case "401" -> UNAUTHENTICATED;
            case "403" -> PERMISSION_DENIED;
            case "404" -> UNIMPLEMENTED;
            case "429", "502", "503", "504" -> UNAVAILABLE;
            default -> UNKNOWN;
        };
        return Outcome.failed(code, "HTTP status code " + status);
    }

    /** grpc-message is percent-encoded UTF-8 (the gRPC HTTP/2 protocol). */
    static String percentDecoded(String s) {
        if (s.indexOf('%') < 0) return s;
        var out = new ByteArrayOutputStream();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%' && i + 2 < s.length()) {
                int hi = Character.digit(s.charAt(i + 1), 16), lo = Character.digit(s.charAt(i + 2), 16);
                if (hi >= 0 && lo >= 0) {
                    out.write(hi << 4 | lo);
                    i += 2;
                    continue;
                }
            }
            out.write(c);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static String value(List<Hpack.Field> fields, String name) {
        for (var f : fields) if (f.name().equals(name)) return f.value();
        return null;
    }

    /** Reads and handles one frame; false when stream 1 has ended (or the connection did). */
    private boolean readFrame(Response response) throws IOException {
        header.clear();
        if (!fill(header)) {
            response.failure = response.failure != null ? response.failure
                    : Outcome.failed(UNAVAILABLE, "the plugin closed the connection before the call ended");
            return false;
        }
        header.flip();
        int length = (header.get() & 0xff) << 16 | (header.get() & 0xff) << 8 | header.get() & 0xff;
        int type = header.get() & 0xff;
        int flags = header.get() & 0xff;
        int stream = header.getInt() & 0x7fffffff;
        if (length > MAX_FRAME_IN) throw protocol("a frame of " + length + " octets, over " + MAX_FRAME_IN);
        var payload = ByteBuffer.allocate(length);
        if (!fill(payload)) throw protocol("the connection ended inside a frame");
        byte[] p = payload.array();
        switch (type) {
            case SETTINGS -> {
                if ((flags & ACK) == 0) {
                    applySettings(p);
                    write(frame(SETTINGS, ACK, 0, new byte[0]));
                }
            }
            case PING -> {
                if ((flags & ACK) == 0) write(frame(PING, ACK, 0, p));
            }
            case WINDOW_UPDATE -> {
                long increment = ByteBuffer.wrap(p).getInt() & 0x7fffffffL;
                if (stream == 0) connectionSendWindow += increment;
                else if (stream == STREAM) streamSendWindow += increment;
            }
            case HEADERS -> {
                if (stream != STREAM) throw protocol("HEADERS on stream " + stream);
                byte[] block = headerBlock(p, flags);
                var fields = hpack.decode(block);
                if (listSize(fields) > MAX_HEADER_LIST) {
                    // grpc-java's client refuses it the same way (its maxInboundMetadataSize, which we announce too)
                    response.failure = new Outcome(INTERNAL, "http2 exception", null,
                            protocol("Header size exceeded max allowed size (" + MAX_HEADER_LIST + ")"));
                    return false;
                }
                if (response.headers == null) response.headers = fields;
                else response.trailers = fields;
                if ((flags & END_STREAM) != 0) return false;
            }
            case DATA -> {
                if (stream != STREAM) throw protocol("DATA on stream " + stream);
                int from = 0, to = p.length;
                if ((flags & PADDED) != 0) {
                    from = 1;
                    to = p.length - (p[0] & 0xff);
                    if (to < from) throw protocol("padding longer than its frame");
                }
                if (response.headers == null) throw protocol("DATA before HEADERS");
                // no more than a message's prefix and the bound kept: a larger answer is refused, not buffered
                if (response.body.size() + (to - from) <= maxResponse + 5L) response.body.write(p, from, to - from);
                else response.failure = Outcome.failed(RESOURCE_EXHAUSTED,
                        "gRPC message exceeds maximum size " + maxResponse + ": " + declaredLength(response.body.toByteArray()));
                if ((flags & END_STREAM) != 0) {
                    if (response.failure == null) response.failure = Outcome.failed(INTERNAL, "the stream ended without trailers");
                    return false;
                }
            }
            case RST_STREAM -> {
                if (stream == STREAM) {
                    response.failure = reset(ByteBuffer.wrap(p).getInt() & 0xffffffffL);
                    return false;
                }
            }
            case GOAWAY -> {
                int last = ByteBuffer.wrap(p).getInt() & 0x7fffffff;
                if (last < STREAM) {
                    response.failure = Outcome.failed(UNAVAILABLE, "the plugin closed the connection (GOAWAY)");
                    return false;
                }
            }
            case PUSH_PROMISE -> throw protocol("PUSH_PROMISE though push is disabled");
            case CONTINUATION -> throw protocol("CONTINUATION without HEADERS");
            default -> {
                // PRIORITY and unknown types are ignored (RFC 9113 section 4.1)
            }
        }
        return true;
    }

    /** RFC 9113 section 7's error codes by number. */
    private static final String[] ERRORS = {"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
            "SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
            "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"};

    /** A stream reset by the peer: the status and words grpc-java gives it. */
    private static Outcome reset(long error) {
        int code = switch ((int) Math.min(error, 99)) {
            case 7 -> UNAVAILABLE;
            case 8 -> CANCELLED;
            case 11 -> RESOURCE_EXHAUSTED;
            case 12 -> PERMISSION_DENIED;
            case 13 -> UNKNOWN;
            default -> INTERNAL;
        };
        String name = error < ERRORS.length ? ERRORS[(int) error] : "<unknown>";
        return Outcome.failed(code, "RST_STREAM closed stream. HTTP/2 error code: " + name);
    }

    /** RFC 9113 6.5.2: octets of names and values plus 32 per field. */
    private static long listSize(List<Hpack.Field> fields) {
        long size = 0;
        for (var f : fields) size += f.name().length() + f.value().length() + 32;
        return size;
    }

    private static long declaredLength(byte[] prefix) {
        return prefix.length >= 5 ? ByteBuffer.wrap(prefix, 1, 4).getInt() & 0xffffffffL : prefix.length;
    }

    /** A HEADERS payload less padding and priority, joined with its CONTINUATION frames. */
    private byte[] headerBlock(byte[] p, int flags) throws IOException {
        int from = 0, to = p.length;
        if ((flags & PADDED) != 0) {
            from = 1;
            to -= p[0] & 0xff;
        }
        if ((flags & PRIORITY_FLAG) != 0) from += 5;
        if (to < from) throw protocol("padding longer than its frame");
        var block = new ByteArrayOutputStream();
        block.write(p, from, to - from);
        while ((flags & END_HEADERS) == 0) {
            header.clear();
            if (!fill(header)) throw protocol("the connection ended inside a header block");
            header.flip();
            int length = (header.get() & 0xff) << 16 | (header.get() & 0xff) << 8 | header.get() & 0xff;
            int type = header.get() & 0xff;
            flags = header.get() & 0xff;
            int stream = header.getInt() & 0x7fffffff;
            if (type != CONTINUATION || stream != STREAM) throw protocol("a header block interrupted");
            if (length > MAX_FRAME_IN) throw protocol("a frame of " + length + " octets");
            var more = ByteBuffer.allocate(length);
            if (!fill(more)) throw protocol("the connection ended inside a header block");
            block.write(more.array(), 0, length);
        }
        return block.toByteArray();
    }

    private void applySettings(byte[] p) throws IOException {
        if (p.length % 6 != 0) throw protocol("SETTINGS of " + p.length + " octets");
        var in = ByteBuffer.wrap(p);
        while (in.hasRemaining()) {
            int id = in.getShort() & 0xffff;
            long value = in.getInt() & 0xffffffffL;
            if (id == 4) {
                if (value > MAX_WINDOW) throw protocol("initial window " + value);
                streamSendWindow += value - peerInitialWindow;   // 6.9.2: the open stream's window moves by the change
                peerInitialWindow = (int) value;
            } else if (id == 5) {
                if (value < DEFAULT_FRAME || value > 16_777_215) throw protocol("max frame size " + value);
                peerMaxFrame = (int) value;
            }
        }
    }

    private static IOException protocol(String what) {
        return new IOException("HTTP/2 protocol error: " + what);
    }

    private boolean fill(ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                if (buffer.position() == 0) return false;
                throw new ClosedChannelException();
            }
        }
        return true;
    }

    private void write(byte[] bytes) throws IOException {
        var buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) channel.write(buffer);
    }

    private void writeHeaders(ByteArrayOutputStream out, byte[] block) {
        // one HEADERS, then CONTINUATIONs for a block larger than the peer's frame size
        int first = Math.min(block.length, DEFAULT_FRAME);
        writeFrame(out, HEADERS, first == block.length ? END_HEADERS : 0, STREAM, Arrays.copyOfRange(block, 0, first));
        for (int at = first; at < block.length; at += DEFAULT_FRAME) {
            int end = Math.min(block.length, at + DEFAULT_FRAME);
            writeFrame(out, CONTINUATION, end == block.length ? END_HEADERS : 0, STREAM, Arrays.copyOfRange(block, at, end));
        }
    }

    static byte[] frame(int type, int flags, int stream, byte[] payload) {
        var out = new ByteArrayOutputStream(9 + payload.length);
        writeFrame(out, type, flags, stream, payload);
        return out.toByteArray();
    }

    static void writeFrame(ByteArrayOutputStream out, int type, int flags, int stream, byte[] payload) {
        out.write(payload.length >>> 16);
        out.write(payload.length >>> 8);
        out.write(payload.length);
        out.write(type);
        out.write(flags);
        out.writeBytes(int32(stream));
        out.writeBytes(payload);
    }

    private static byte[] settings(int... idValue) {
        var b = ByteBuffer.allocate(idValue.length / 2 * 6);
        for (int i = 0; i < idValue.length; i += 2) b.putShort((short) idValue[i]).putInt(idValue[i + 1]);
        return b.array();
    }

    private static byte[] int32(int v) {
        return ByteBuffer.allocate(4).putInt(v).array();
    }
}
