package io.csi4j.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

class SanityReportTest {

    static final SanityReport REPORT = new SanityReport(Instant.parse("2026-01-02T03:04:05Z"), List.of(
            new TestResult("Identity/Probe/succeeds", Outcome.PASSED, Duration.ofMillis(3), ""),
            new TestResult("Controller/DeleteVolume/a volume that does not exist answers OK", Outcome.FAILED, Duration.ofMillis(1500),
                    "spec: DeleteVolume MUST reply OK for a volume that does not exist; got NOT_FOUND (no \u0001such <volume> & \"x\")"),
            new TestResult("Controller/CreateSnapshot/cuts a snapshot of a volume", Outcome.NOT_APPLICABLE, Duration.ZERO,
                    "needs controller capability CREATE_DELETE_SNAPSHOT"),
            new TestResult("Node/NodeGetInfo/returns a node_id", Outcome.PASSED, Duration.ofMillis(2), "")));

    @Test
    void countsAndSummary() {
        assertEquals(2, REPORT.passed());
        assertEquals(1, REPORT.failed());
        assertEquals(1, REPORT.notApplicable());
        assertEquals("2 passed, 1 failed, 0 not run, 1 not applicable", REPORT.summary());
        assertEquals(false, REPORT.succeeded());
        assertEquals(List.of(REPORT.results().get(1)), REPORT.failures());
    }

    @Test
    void linesNameTheVerdict() {
        assertEquals("PASS Identity/Probe/succeeds (3 ms)", REPORT.results().get(0).line());
        assertTrue(REPORT.results().get(1).line().startsWith("FAIL Controller/DeleteVolume/a volume that does not exist answers OK (1500 ms)\n     spec: DeleteVolume"));
        assertTrue(REPORT.results().get(2).line().startsWith("N/A  Controller/CreateSnapshot"));
    }

    @Test
    void writesJUnitXml(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("reports/sanity.xml");
        REPORT.writeJUnitXml(file);
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
        Element suite = doc.getDocumentElement();
        assertEquals("testsuite", suite.getTagName());
        assertEquals("4", suite.getAttribute("tests"));
        assertEquals("1", suite.getAttribute("failures"));
        assertEquals("1", suite.getAttribute("skipped"));
        assertEquals("1.505", suite.getAttribute("time"));
        var cases = doc.getElementsByTagName("testcase");
        assertEquals(4, cases.getLength());
        Element failed = (Element) cases.item(1);
        assertEquals("sanity.Controller.DeleteVolume", failed.getAttribute("classname"));
        assertEquals("Controller/DeleteVolume/a volume that does not exist answers OK", failed.getAttribute("name"));
        Element failure = (Element) failed.getElementsByTagName("failure").item(0);
        assertTrue(failure.getAttribute("message").contains("got NOT_FOUND (no \\u0001such <volume> & \"x\")"), failure.getAttribute("message"));
        Element skipped = (Element) ((Element) cases.item(2)).getElementsByTagName("skipped").item(0);
        assertEquals("needs controller capability CREATE_DELETE_SNAPSHOT", skipped.getAttribute("message"));
        assertEquals(0, ((Element) cases.item(0)).getChildNodes().getLength());
    }
}
