package dev.toolcert.adapter.junit;

import dev.toolcert.adapter.Report;
import dev.toolcert.adapter.Toolcert;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * {@code @ExtendWith(ToolcertExtension.class)}: a test method may take a {@link Runner}, whose
 * {@code certify} runs the binary (reproducers in a fresh temporary folder) and returns the {@link
 * Report}; {@code report.assertConforms()} then fails the test with every finding.
 *
 * <pre>{@code
 * @ExtendWith(ToolcertExtension.class)
 * class AdapterTest {
 *     @Test
 *     void conforms(ToolcertExtension.Runner toolcert) {
 *         toolcert.certify(Toolcert.javaCommand("my.Adapter"), Toolcert.options().level("bytes").dialect("anthropic"))
 *                 .assertConforms();
 *     }
 * }
 * }</pre>
 */
public final class ToolcertExtension implements ParameterResolver {
    /** Certifies with the toolcert binary, each run's reproducers in a folder of its own. */
    public static final class Runner {
        public Report certify(String subject, Toolcert.Options options) {
            try {
                return Toolcert.certify(subject, options.outDir(Files.createTempDirectory("toolcert-")));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        public Report certify(String subject) {
            return certify(subject, Toolcert.options());
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext extension) {
        return parameter.getParameter().getType() == Runner.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext extension) {
        return new Runner();
    }

    /** Where a test may keep reproducers of its own. */
    public static Path tempDir() throws IOException {
        return Files.createTempDirectory("toolcert-");
    }
}
