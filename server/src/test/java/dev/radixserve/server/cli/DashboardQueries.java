package dev.radixserve.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The metric names the Grafana dashboard's PromQL expressions read. */
final class DashboardQueries {
  static final Path DASHBOARD = Path.of("../docker/grafana/dashboards/radixserve.json");

  // Series names of this server and the JVM; PromQL functions and labels never start so.
  private static final Pattern METRIC = Pattern.compile("\\b((?:radixserve|jvm|process)_[a-zA-Z0-9_]+)\\b");

  private DashboardQueries() {}

  static TreeSet<String> metricNames(Path dashboard) throws IOException {
    JsonNode root = new ObjectMapper().readTree(dashboard.toFile());
    TreeSet<String> names = new TreeSet<>();
    for (JsonNode expr : root.findValues("expr")) {
      Matcher m = METRIC.matcher(expr.asText());
      while (m.find()) {
        names.add(m.group(1));
      }
    }
    return names;
  }
}
