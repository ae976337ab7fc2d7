package dev.toolcert.adapter.junit;

import dev.toolcert.adapter.Finding;
import dev.toolcert.adapter.Report;
import dev.toolcert.adapter.Toolcert;
import dev.toolcert.adapter.ToolcertException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.opentest4j.AssertionFailedError;

/**
 * JUnit 5 integration: certify an adapter with the {@code toolcert} binary and report each finding as
 * a failing test, with its reproducer and replay line.
 *
 * <pre>{@code
 * class ToyaccTest {
 *     @TestFactory
 *     Stream<DynamicTest> toyacc() {
 *         return ToolcertTests.certifyTests(Toolcert.javaCommand("toyacc.Adapter"),
 *                 Toolcert.options().cases(300).schema(false));
 *     }
 * }
 * }</pre>
 *
 * <p>The certification runs once, when the factory is called; then there is one dynamic test per
 * invariant of the run: it passes, fails with the findings (smallest case, expected and observed,
 * transcript, reproducer, replay line), or is aborted (skipped) for a rule no case of the run could
 * break ({@code n/a}). The binary is {@code $TOOLCERT_BIN} or {@code toolcert} on PATH.
 */
public final class ToolcertTests {
    private ToolcertTests() {}

    /** One dynamic test per invariant of one certification of {@code subject}. */
    public static Stream<DynamicTest> certifyTests(String subject, Toolcert.Options options) {
        Report report;
        try {
            report = Toolcert.certify(subject, options);
        } catch (ToolcertException e) {
            return Stream.of(DynamicTest.dynamicTest("toolcert certify " + subject, () -> {
                throw new AssertionFailedError(e.getMessage());
            }));
        }
        return tests(report);
    }

    /** The dynamic tests of a report already made. */
    public static Stream<DynamicTest> tests(Report report) {
        List<String> ids = new ArrayList<>();
        for (Map<String, Object> r : report.invariants()) {
            ids.add(String.valueOf(r.get("id")));
        }
        // Findings the report has for a rule it does not list still fail a test of their own.
        report.findings().stream().map(Finding::invariant).filter(i -> !ids.contains(i)).distinct().sorted()
                .forEach(ids::add);
        if (ids.isEmpty()) {
            return Stream.of(DynamicTest.dynamicTest("conformance", report::assertConforms));
        }
        return ids.stream().map(id -> DynamicTest.dynamicTest(id, () -> check(report, id)));
    }

    private static void check(Report report, String id) {
        List<Finding> mine = report.findingsFor(id);
        if (!mine.isEmpty()) {
            // The findings are the message; the stack of this helper would only hide them.
            AssertionFailedError e = new AssertionFailedError(
                    mine.stream().map(Finding::toString).collect(Collectors.joining("\n\n")));
            e.setStackTrace(new StackTraceElement[0]);
            throw e;
        }
        String status = report.status(id);
        if ("fail".equals(status)) {
            throw new AssertionFailedError(id + " fails (" + report.subject() + "); see " + report.outDir());
        }
        if ("n/a".equals(status)) {
            Assumptions.abort(id + ": n/a, no case of this run could break it");
        }
    }
}
