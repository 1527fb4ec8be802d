package io.csi4j.cli.call;

import io.csi4j.driver.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/** {@code --secret k=v} and {@code --secrets-file FILE}; the flags win over the file. */
public final class SecretOptions {
    @Option(names = "--secret", paramLabel = "KEY=VALUE", description = "A secret for the call (repeatable)")
    Map<String, String> secrets = new LinkedHashMap<>();

    @Option(names = "--secrets-file", paramLabel = "FILE",
            description = "Secrets from a file: a JSON object of strings, or KEY=VALUE lines (# starts a comment)")
    Path file;

    public Map<String, String> secrets() {
        var all = new LinkedHashMap<String, String>();
        if (file != null) all.putAll(read(file));
        all.putAll(secrets);
        return all;
    }

    static Map<String, String> read(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read secrets file " + file, e);
        }
        var map = new LinkedHashMap<String, String>();
        if (text.stripLeading().startsWith("{")) {
            if (!(Json.parse(text) instanceof Map<?, ?> object)) throw new IllegalArgumentException(file + " is not a JSON object");
            object.forEach((k, v) -> {
                if (!(v instanceof String s)) throw new IllegalArgumentException("secrets file " + file + ": value of '" + k + "' is not a string");
                map.put((String) k, s);
            });
            return map;
        }
        int n = 0;
        for (String line : text.split("\n")) {
            n++;
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) continue;
            int eq = l.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("secrets file " + file + " line " + n + " is not KEY=VALUE");
            map.put(l.substring(0, eq).strip(), l.substring(eq + 1).strip());
        }
        return map;
    }
}
