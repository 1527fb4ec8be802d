package io.csi4j.cli.output;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.csi4j.driver.json.Json;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.io.IOException;

/** Prints a response in the chosen format. JSON and YAML use the proto field names, defaults included. */
public final class Output {
    private static final JsonFormat.Printer JSON = JsonFormat.printer().preservingProtoFieldNames().alwaysPrintFieldsWithNoPresence();

    private final OutputFormat format;
    private final PrintWriter out;

    public Output(OutputFormat format, PrintWriter out) {
        this.format = format;
        this.out = out;
    }

    public OutputFormat format() {
        return format;
    }

    /** Shows {@code message}, as its standard table view in table format. */
    public void show(Message message) {
        show(message, Views.of(message));
    }

    /** Shows {@code message}; {@code table} is what table format prints instead of the standard view. */
    public void show(Message message, View table) {
        switch (format) {
            case TABLE -> table.render(out);
            case JSON -> out.println(json(message));
            case YAML -> out.print(Yaml.write(Json.parse(json(message))));
        }
        out.flush();
    }

    public static String json(Message message) {
        try {
            return JSON.print(message);
        } catch (InvalidProtocolBufferException e) {
            throw new UncheckedIOException(new IOException("cannot print " + message.getDescriptorForType().getFullName(), e));
        }
    }
}
