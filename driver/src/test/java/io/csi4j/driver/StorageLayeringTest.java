package io.csi4j.driver;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Storage speaks storage (docs/design.md, "Errors at the edge"): the catalog, the engines, the OS bindings and
 * their failure type know nothing of gRPC or of CSI's status codes. A failure there is a StorageException with
 * a reason; the CSI layer maps it ({@code csi/StorageStatus}). The domain speaks the domain: a failure there is a
 * DomainException with a kind, and each edge ({@code csi/}, {@code addons/}, {@code cluster/}) picks the status in
 * one mapper. Services map wire messages to the domain model and back, nothing else: they read no catalog rows
 * themselves, and the model is plain records. No two packages depend on each other, however indirectly: the
 * composition root ({@code plugin/Driver}) sits on top and none reads it back.
 */
class StorageLayeringTest {
    private static final Path ROOT = Path.of("src/main/java/io/csi4j/driver");
    private static final List<String> STORAGE = List.of("catalog", "engine", "os", "storage");
    /** The domain operations and their failure type. */
    private static final List<String> DOMAIN = List.of("volume", "snapshot", "group", "node", "mobility", "replication", "domain");
    /** An import or a fully qualified use, in code (comments count too: a doc that names gRPC codes is a smell). */
    private static final Pattern FORBIDDEN = Pattern.compile("\\bio\\.grpc\\.|\\bio\\.csi4j\\.sdk\\.CsiException\\b|\\bCsiException\\b");
    /**
     * What domain code may not name, by import or by qualified name: gRPC, the generated wire types and protobuf, the
     * SDK (the gRPC side, where CsiException lives), and the edges above it. Comments may name what they explain.
     */
    private static final Pattern DOMAIN_FORBIDDEN = Pattern.compile("\\bio\\.grpc\\.|\\bio\\.csi4j\\.proto\\.|\\bcom\\.google\\.protobuf\\."
            + "|\\bio\\.csi4j\\.sdk\\.|\\bCsiException\\b|\\bio\\.csi4j\\.driver\\.(csi|addons|cluster)\\.");
    /** A use of one of the driver's classes by import (single, static or on demand) or by qualified name. */
    private static final Pattern DRIVER_CLASS = Pattern.compile("\\bio\\.csi4j\\.driver((?:\\.[a-z]\\w*)*)\\.(?:[A-Z]\\w*|\\*)");

    @Test
    void noStorageFileKnowsGrpcOrCsiException() throws IOException {
        List<String> offences = new ArrayList<>();
        int files = scan(STORAGE, FORBIDDEN, offences);
        assertTrue(files > 50, "the storage packages were found (" + files + " files under " + ROOT.toAbsolutePath() + ")");
        assertEquals(List.of(), offences, "storage must throw StorageException and leave gRPC codes to csi/StorageStatus");
    }

    @Test
    void servicesDoNotReadTheCatalog() throws IOException {
        List<String> offences = new ArrayList<>();
        assertTrue(scan(List.of("csi", "addons", "cluster"), Pattern.compile("\\bio\\.csi4j\\.driver\\.catalog\\b"), offences) > 0);
        assertEquals(List.of(), offences, "services map wire <-> model; the domain reads the catalog");
    }

    @Test
    void theModelDependsOnNothingBelowOrAbove() throws IOException {
        List<String> offences = new ArrayList<>();
        assertTrue(scan(List.of("model"), Pattern.compile(
                "\\bio\\.csi4j\\.(driver\\.(catalog|engine|os)|proto|sdk)\\b|\\bio\\.grpc\\b"), offences) > 0);
        assertEquals(List.of(), offences, "the model is plain records");
    }

    @Test
    void noDomainFileKnowsGrpcWireTypesOrTheEdges() throws IOException {
        List<String> offences = new ArrayList<>();
        int files = scanCode(DOMAIN, DOMAIN_FORBIDDEN, offences);
        assertTrue(files > 25, "the domain packages were found (" + files + " files under " + ROOT.toAbsolutePath() + ")");
        assertEquals(List.of(), offences, "the domain throws DomainException and speaks records; csi/, addons/ and cluster/ "
                + "map the wire and pick status codes (StorageStatus, AddonsStatus, AgentStatus)");
    }

    @Test
    void theDriversPackagesFormNoCycle() throws IOException {
        Map<String, Map<String, String>> uses = packageGraph();
        assertTrue(uses.size() > 15, "the driver's packages were found: " + uses.keySet());
        assertEquals(List.of(), cycle(uses), "a package cycle (each step with a line that makes it): what both sides "
                + "need goes one level down (as DriverConfig and Version), the composition root stays on top");
    }

    record Snippet(String source, boolean offends) {}

    static Stream<Snippet> snippets() {
        return Stream.of(
                new Snippet("import io.grpc.Status;", true),
                new Snippet("throw new io.csi4j.sdk.CsiException(null, \"x\");", true),
                new Snippet("import io.csi4j.sdk.CsiException;", true),
                new Snippet("var chunk = io.csi4j.proto.cluster.SourceChunk.newBuilder();", true),
                new Snippet("import io.csi4j.driver.cluster.Peers;", true),
                new Snippet("return com.google.protobuf.ByteString.EMPTY;", true),
                new Snippet("import io.csi4j.driver.csi.WireMapping;", true),
                new Snippet("import io.csi4j.driver.domain.DomainException;", false),
                new Snippet("import io.csi4j.driver.csiutil.Helper;", false),
                new Snippet("// the edge maps this to io.grpc.Status.NOT_FOUND", false),
                new Snippet("/* a CsiException once; io.csi4j.driver.csi.StorageStatus picks the code */ int x;", false),
                new Snippet("/**\n * {@link io.grpc.Status}\n */\nclass A {}", false),
                new Snippet("String s = \"io.grpc.Status and CsiException\";", false),
                new Snippet("String s = \"\\\"\"; var c = io.grpc.Context.ROOT;", true),
                new Snippet("char q = '\"'; var c = io.grpc.Context.ROOT;", true),
                new Snippet("String s = \"\"\"\n  io.grpc.Status\n  \"\"\"; int x;", false));
    }

    /** The scanner reads code: imports and qualified names count, comments and string literals do not. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("snippets")
    void theDomainRuleReadsCodeNotComments(Snippet snippet) {
        List<String> offences = new ArrayList<>();
        offences(Path.of("Snippet.java"), snippet.source(), DOMAIN_FORBIDDEN, offences);
        assertEquals(snippet.offends(), !offences.isEmpty(), snippet.source() + " -> " + offences);
    }

    /** Package ("" for io.csi4j.driver itself) to each driver package it uses, with the first line that does. */
    private static Map<String, Map<String, String>> packageGraph() throws IOException {
        Map<String, Map<String, String>> uses = new TreeMap<>();
        try (Stream<Path> sources = Files.walk(ROOT)) {
            for (Path file : sources.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                String from = ROOT.relativize(file.getParent()).toString().replace('/', '.');
                Map<String, String> edges = uses.computeIfAbsent(from, k -> new TreeMap<>());
                String[] code = codeOnly(Files.readString(file)).split("\n", -1);
                for (int i = 0; i < code.length; i++) {
                    Matcher m = DRIVER_CLASS.matcher(code[i]);
                    while (m.find()) {
                        String to = m.group(1).isEmpty() ? "" : m.group(1).substring(1);
                        if (!to.equals(from)) edges.putIfAbsent(to, ROOT.relativize(file) + ":" + (i + 1));
                    }
                }
            }
        }
        return uses;
    }

    /** One cycle of {@code uses}, as its steps, or an empty list. */
    private static List<String> cycle(Map<String, Map<String, String>> uses) {
        Map<String, Integer> state = new HashMap<>();   // absent: not seen; 1: on the path; 2: done
        List<String> path = new ArrayList<>();
        for (String start : uses.keySet()) {
            List<String> found = cycleFrom(start, uses, state, path);
            if (!found.isEmpty()) return found;
        }
        return List.of();
    }

    private static List<String> cycleFrom(String node, Map<String, Map<String, String>> uses, Map<String, Integer> state,
                                          List<String> path) {
        if (state.getOrDefault(node, 0) == 2) return List.of();
        if (state.getOrDefault(node, 0) == 1) {
            List<String> steps = new ArrayList<>();
            List<String> loop = new ArrayList<>(path.subList(path.indexOf(node), path.size()));
            loop.add(node);
            for (int i = 0; i + 1 < loop.size(); i++) {
                String a = loop.get(i);
                String b = loop.get(i + 1);
                steps.add("'" + a + "' -> '" + b + "' (" + uses.get(a).get(b) + ")");
            }
            return steps;
        }
        state.put(node, 1);
        path.add(node);
        for (String next : uses.getOrDefault(node, Map.of()).keySet()) {
            List<String> found = cycleFrom(next, uses, state, path);
            if (!found.isEmpty()) return found;
        }
        path.removeLast();
        state.put(node, 2);
        return List.of();
    }

    /** Adds every line of the packages' sources that {@code forbidden} finds to {@code offences}; the files read. */
    private static int scan(List<String> packages, Pattern forbidden, List<String> offences) throws IOException {
        int files = 0;
        for (String pkg : packages) {
            try (Stream<Path> sources = Files.walk(ROOT.resolve(pkg))) {
                for (Path file : sources.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    files++;
                    List<String> lines = Files.readAllLines(file);
                    for (int i = 0; i < lines.size(); i++) {
                        if (forbidden.matcher(lines.get(i)).find()) offences.add(file + ":" + (i + 1) + ": " + lines.get(i).strip());
                    }
                }
            }
        }
        return files;
    }

    /** As {@link #scan}, but in code only: imports and qualified names anywhere in it, not comments or literals. */
    private static int scanCode(List<String> packages, Pattern forbidden, List<String> offences) throws IOException {
        int files = 0;
        for (String pkg : packages) {
            try (Stream<Path> sources = Files.walk(ROOT.resolve(pkg))) {
                for (Path file : sources.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    files++;
                    offences(file, Files.readString(file), forbidden, offences);
                }
            }
        }
        return files;
    }

    private static void offences(Path file, String source, Pattern forbidden, List<String> offences) {
        String[] code = codeOnly(source).split("\n", -1);
        String[] lines = source.split("\n", -1);
        for (int i = 0; i < code.length; i++) {
            if (forbidden.matcher(code[i]).find()) offences.add(file + ":" + (i + 1) + ": " + lines[i].strip());
        }
    }

    /** {@code source} with comments and string, text block and char literals blanked; lines stay where they were. */
    static String codeOnly(String source) {
        StringBuilder out = new StringBuilder(source.length());
        int i = 0;
        int n = source.length();
        while (i < n) {
            char c = source.charAt(i);
            if (source.startsWith("//", i)) {
                while (i < n && source.charAt(i) != '\n') i++;
            } else if (source.startsWith("/*", i)) {
                int end = source.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                blank(source, i, end, out);
                i = end;
            } else if (source.startsWith("\"\"\"", i)) {
                int end = i + 3;
                while (end < n && !source.startsWith("\"\"\"", end)) end += source.charAt(end) == '\\' ? 2 : 1;
                end = Math.min(n, end + 3);
                blank(source, i, end, out);
                i = end;
            } else if (c == '"' || c == '\'') {
                int end = i + 1;
                while (end < n && source.charAt(end) != c && source.charAt(end) != '\n') end += source.charAt(end) == '\\' ? 2 : 1;
                end = Math.min(n, end + 1);
                blank(source, i, end, out);
                i = end;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    private static void blank(String source, int from, int to, StringBuilder out) {
        for (int j = from; j < to; j++) out.append(source.charAt(j) == '\n' ? '\n' : ' ');
    }
}
