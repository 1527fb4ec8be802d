package io.csi4j.testkit;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import javax.xml.stream.XMLOutputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamWriter;

/**
 * The verdicts of one run, in the order the tests ran.
 *
 * @param pluginStopped the one line that said the plugin stopped answering and did not come back, when it did
 */
public record SanityReport(Instant started, List<TestResult> results, Optional<String> pluginStopped) {
    public SanityReport {
        results = List.copyOf(results);
        Objects.requireNonNull(pluginStopped);
    }

    public SanityReport(Instant started, List<TestResult> results) {
        this(started, results, Optional.empty());
    }

    public long passed() { return count(Outcome.PASSED); }
    public long failed() { return count(Outcome.FAILED); }
    public long notApplicable() { return count(Outcome.NOT_APPLICABLE); }
    public long notRun() { return count(Outcome.NOT_RUN); }

    public boolean succeeded() {
        return failed() == 0;
    }

    public List<TestResult> failures() {
        return results.stream().filter(r -> r.outcome() == Outcome.FAILED).toList();
    }

    public Duration duration() {
        return results.stream().map(TestResult::duration).reduce(Duration.ZERO, Duration::plus);
    }

    /** True when the plugin stopped answering and did not come back: the run was cut short. */
    public boolean cutShort() {
        return pluginStopped.isPresent() || notRun() > 0;
    }

    /** The closing line, exactly {@code N passed, N failed, N not run, N not applicable}. */
    public String summary() {
        return passed() + " passed, " + failed() + " failed, " + notRun() + " not run, " + notApplicable() + " not applicable";
    }

    private long count(Outcome outcome) {
        return results.stream().filter(r -> r.outcome() == outcome).count();
    }

    /** Writes the report in the JUnit XML format CI servers read: one testcase per test, N/A and not run as skipped (with the reason). */
    public void writeJUnitXml(Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) Files.createDirectories(parent);
        try (OutputStream out = Files.newOutputStream(file)) {
            XMLStreamWriter xml = XMLOutputFactory.newFactory().createXMLStreamWriter(out, "UTF-8");
            xml.writeStartDocument("UTF-8", "1.0");
            xml.writeCharacters("\n");
            xml.writeStartElement("testsuite");
            xml.writeAttribute("name", "csi4j-sanity");
            xml.writeAttribute("tests", Long.toString(results.size()));
            xml.writeAttribute("failures", Long.toString(failed()));
            xml.writeAttribute("errors", "0");
            xml.writeAttribute("skipped", Long.toString(notApplicable() + notRun()));
            xml.writeAttribute("time", seconds(duration()));
            xml.writeAttribute("timestamp", started.truncatedTo(ChronoUnit.SECONDS).toString());
            xml.writeCharacters("\n");
            for (TestResult result : results) {
                writeCase(xml, result);
            }
            xml.writeEndElement();
            xml.writeCharacters("\n");
            xml.writeEndDocument();
            xml.close();
        } catch (XMLStreamException e) {
            throw new IOException("cannot write JUnit XML to " + file, e);
        }
    }

    private static void writeCase(XMLStreamWriter xml, TestResult result) throws XMLStreamException {
        String name = result.name();
        int cut = name.lastIndexOf('/');
        String group = cut < 0 ? "" : name.substring(0, cut);
        xml.writeCharacters("  ");
        boolean empty = result.outcome() == Outcome.PASSED;
        if (empty) xml.writeEmptyElement("testcase"); else xml.writeStartElement("testcase");
        xml.writeAttribute("classname", group.isEmpty() ? "sanity" : "sanity." + group.replace('/', '.'));
        xml.writeAttribute("name", name);
        xml.writeAttribute("time", seconds(result.duration()));
        if (!empty) {
            String text = xmlSafe(result.message());
            if (result.outcome() == Outcome.FAILED) {
                xml.writeStartElement("failure");
                xml.writeAttribute("message", text);
                xml.writeAttribute("type", "SpecViolation");
                xml.writeCharacters(text);
                xml.writeEndElement();
            } else {
                xml.writeEmptyElement("skipped");
                xml.writeAttribute("message", text);
            }
            xml.writeEndElement();
        }
        xml.writeCharacters("\n");
    }

    private static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.3f", d.toNanos() / 1e9);
    }

    /** Plugin error messages may carry control characters XML 1.0 cannot hold. */
    private static String xmlSafe(String text) {
        StringBuilder b = new StringBuilder(text.length());
        text.codePoints().forEach(c -> {
            boolean ok = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) || (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000;
            if (ok) b.appendCodePoint(c); else b.append(String.format("\\u%04x", c));
        });
        return b.toString();
    }
}
