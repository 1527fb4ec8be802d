package io.csi4j.sdk;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;

/**
 * {@code 2026-01-02T03:04:05.678Z INFO  call: /csi.v1.Controller/CreateVolume OK 3.1ms}: one record, one
 * line, so logs stay greppable and a record can never forge another (line breaks are escaped).
 */
public final class OneLineFormatter extends Formatter {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    @Override
    public String format(LogRecord record) {
        StringBuilder line = new StringBuilder(160);
        TIME.formatTo(Instant.ofEpochMilli(record.getMillis()), line);
        String level = levelName(record);
        line.append(' ').append(level).repeat(' ', Math.max(0, 5 - level.length())).append(' ');
        String logger = record.getLoggerName();
        if (logger != null) line.append(logger.substring(logger.lastIndexOf('.') + 1)).append(": ");
        line.append(oneLine(formatMessage(record)));
        if (record.getThrown() != null) {
            // only the type and frames: exception messages are not ours to print (they may hold secrets)
            Throwable t = record.getThrown();
            line.append(" | ").append(t.getClass().getName());
            StackTraceElement[] frames = t.getStackTrace();
            for (int i = 0; i < Math.min(frames.length, 8); i++) line.append(" at ").append(frames[i]);
        }
        return line.append(System.lineSeparator()).toString();
    }

    private static String levelName(LogRecord record) {
        return switch (record.getLevel().getName()) {
            case "SEVERE" -> "ERROR";
            case "WARNING" -> "WARN";
            case "FINE", "FINER" -> "DEBUG";
            case "FINEST" -> "TRACE";
            default -> record.getLevel().getName();
        };
    }

    static String oneLine(String s) {
        if (s == null) return "";
        return s.indexOf('\n') < 0 && s.indexOf('\r') < 0 ? s : s.replace("\r", "\\r").replace("\n", "\\n");
    }
}
