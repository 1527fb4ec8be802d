package io.csi4j.cli.testing;

import io.csi4j.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Runs {@code csi4j} command lines in this JVM, capturing what they print. */
public final class Cli {
    private final List<String> common;

    private Cli(List<String> common) {
        this.common = common;
    }

    /** Every command run through this gets {@code --endpoint URL} appended. */
    public static Cli against(String endpoint) {
        return new Cli(List.of("--endpoint", endpoint));
    }

    public static Cli plain() {
        return new Cli(List.of());
    }

    public record Result(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
        }
    }

    public Result run(String... args) {
        var all = new ArrayList<>(Arrays.asList(args));
        all.addAll(common);
        return exec(all.toArray(String[]::new));
    }

    /** Runs and asserts exit 0 with nothing on stderr. */
    public Result ok(String... args) {
        var r = run(args);
        org.junit.jupiter.api.Assertions.assertEquals(0, r.exit(), () -> String.join(" ", args) + "\n" + r);
        org.junit.jupiter.api.Assertions.assertEquals("", r.err(), () -> String.join(" ", args) + "\n" + r);
        return r;
    }

    /** Runs with {@code -o json} and parses stdout back into the response type {@code prototype} is of. */
    public <T extends com.google.protobuf.Message> T json(T prototype, String... args) {
        var all = new ArrayList<>(Arrays.asList(args));
        all.addAll(List.of("-o", "json"));
        var r = ok(all.toArray(String[]::new));
        var builder = prototype.newBuilderForType();
        try {
            com.google.protobuf.util.JsonFormat.parser().merge(r.out(), builder);
        } catch (com.google.protobuf.InvalidProtocolBufferException e) {
            throw new AssertionError("-o json output does not parse as " + prototype.getDescriptorForType().getFullName() + ":\n" + r.out(), e);
        }
        @SuppressWarnings("unchecked") T built = (T) builder.build();
        return built;
    }

    public static Result exec(String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int exit;
        try (var o = new PrintStream(out, true, StandardCharsets.UTF_8); var e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            exit = Main.run(o, e, args);
        }
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
