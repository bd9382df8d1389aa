package dev.radixserve.server.cli;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;

/** {@code --version}: the Maven project version, filtered into a resource at build time. */
final class VersionProvider implements IVersionProvider {
  @Override
  public String[] getVersion() throws IOException {
    Properties props = new Properties();
    try (InputStream in = VersionProvider.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        throw new IllegalStateException("version.properties missing from the classpath");
      }
      props.load(in);
    }
    return new String[] {
        "radixserve " + props.getProperty("version"),
        "JVM " + System.getProperty("java.vm.version") + " (" + System.getProperty("java.vm.vendor")
            + "), " + System.getProperty("os.name") + " " + System.getProperty("os.arch")
    };
  }
}
