// Fixes a known flaw of protoc's Java generator that csi.proto trips over: a message with the map
// fields `x` and `mutable_x` (CreateVolumeRequest.parameters / mutable_parameters, ...) gets two
// Builder methods `internalGetMutableX()` (the writer of `x`, the reader of `mutable_x`) and two
// `getMutableX()` (the deprecated raw-map writer of `x`, the deprecated getter of `mutable_x`), so the
// generated code does not compile. The wire and the descriptors are not affected; only Java names are.
//
// Run after protoc, before javac: java MapAccessorClash.java <generated-sources-dir>
// In every Builder that has the clash it renames the writer of `x` to `internalGetWritableX()` at its
// definition and at every call that writes (getMutableMap(), clear(), mergeFrom(), the reflection
// switch), and drops the deprecated raw-map writer `getMutableX()` of `x` (putX/removeX/clearX remain).
// Idempotent: a fixed file has no clash left. Fails loudly if a clash is found but not fully fixed.
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

void main(String[] args) throws IOException {
    if (args.length != 1) throw new IllegalArgumentException("usage: MapAccessorClash <generated-sources-dir>");
    Path root = Path.of(args[0]);
    if (!Files.isDirectory(root)) return;
    List<Path> files;
    try (var walk = Files.walk(root)) {
        files = walk.filter(p -> p.toString().endsWith(".java")).toList();
    }
    int fixed = 0;
    for (Path file : files) {
        String source = Files.readString(file);
        String patched = fix(source);
        if (!patched.equals(source)) {
            Files.writeString(file, patched);
            fixed++;
        }
    }
    if (fixed > 0) System.out.println("MapAccessorClash: fixed " + fixed + " generated file(s)");
}

static final Pattern MUTABLE_TWIN = Pattern.compile("internalGetMutableMutable(\\w+)\\(\\) \\{");

static String fix(String source) {
    Matcher twins = MUTABLE_TWIN.matcher(source);
    String result = source;
    while (twins.find()) {
        String name = twins.group(1);                        // e.g. Parameters
        String member = Character.toLowerCase(name.charAt(0)) + name.substring(1) + "_";
        String mutator = "internalGetMutable" + name + "()";
        String writer = "internalGetWritable" + name + "()";
        Pattern definition = Pattern.compile(Pattern.quote(mutator) + "(\\s*\\{\\s*if \\(" + Pattern.quote(member)
                + " == null\\) \\{\\s*" + Pattern.quote(member) + " = )");
        if (!definition.matcher(result).find()) continue;    // no map field `x` next to `mutable_x`

        result = definition.matcher(result).replaceAll(Matcher.quoteReplacement(writer) + "$1");
        result = Pattern.compile("(?<![\\w.])" + Pattern.quote(mutator) + "(?=\\.(getMutableMap\\(\\)|clear\\(\\)|mergeFrom\\())")
                .matcher(result).replaceAll(Matcher.quoteReplacement(writer));
        result = inReflectionSwitch(result, "return " + mutator + ";", "return " + writer + ";");
        result = Pattern.compile("\\s*/\\*\\*\\s*\\* Use alternate mutation accessors instead\\.\\s*\\*/\\s*"
                        + "@java\\.lang\\.Deprecated\\s*public java\\.util\\.Map<[^>]*>\\s*getMutable" + name
                        + "\\(\\) \\{[^}]*" + Pattern.quote(writer) + "\\.getMutableMap\\(\\);\\s*\\}")
                .matcher(result).replaceAll("");
        if (Pattern.compile(Pattern.quote(mutator) + "\\s*\\{\\s*if \\(" + Pattern.quote(member)).matcher(result).find()
                || result.contains(mutator + ".getMutableMap()")) {
            throw new IllegalStateException("MapAccessorClash: could not fix " + name + ": generator output changed");
        }
    }
    return result;
}

// Replaces `from` with `to` inside the bodies of internalGetMutableMapFieldReflection (the writers' switch).
static String inReflectionSwitch(String source, String from, String to) {
    StringBuilder out = new StringBuilder();
    int at = 0;
    String marker = "internalGetMutableMapFieldReflection(";
    int start;
    while ((start = source.indexOf(marker, at)) >= 0) {
        int open = source.indexOf('{', start);
        int depth = 0, end = open;
        for (int i = open; i < source.length(); i++) {
            char c = source.charAt(i);
            if (c == '{') depth++;
            if (c == '}' && --depth == 0) { end = i; break; }
        }
        out.append(source, at, open).append(source.substring(open, end + 1).replace(from, to));
        at = end + 1;
    }
    return out.append(source.substring(at)).toString();
}
