package io.countergateway.ops;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Holds the dependencies the build resolves to {@code security-floor.tsv}. The versions are read from the paths of the
 * jars on the test class path (each jar's manifest is a resource), which follow the local repository's layout
 * {@code <group path>/<artifact>/<version>/<artifact>-<version>[-classifier].jar}: so what is checked is what the build
 * really put on the class path, whatever BOM or transitive pin chose it (pgjdbc's jar carries no pom.properties).
 */
@DisplayName("Security floor of the dependencies")
class SecurityFloorTest {
  record Floor(String group, String artifact, String minimum, String advisory) {
  }

  @Test
  @DisplayName("every dependency listed in security-floor.tsv is on the class path at or above its fixed version")
  void resolvedVersionsAreAtLeastTheirFloor() throws IOException {
    List<String> jars = jarsOnClassPath();
    List<Floor> floors = floors();
    assertThat(floors).isNotEmpty();
    for (Floor floor : floors) {
      String name = floor.group() + ":" + floor.artifact();
      Optional<String> resolved = resolvedVersion(jars, floor);
      assertThat(resolved).as(name + " is on the class path (or its row is stale)").isPresent();
      assertThat(compare(resolved.get(), floor.minimum()))
        .as(name + " " + resolved.get() + " is below " + floor.minimum() + ": " + floor.advisory())
        .isGreaterThanOrEqualTo(0);
    }
  }

  @Test
  @DisplayName("versions compare by their numbers, not as text")
  void versionsCompareNumerically() {
    assertThat(compare("4.2.18.Final", "4.2.15.Final")).isPositive();
    assertThat(compare("4.2.9.Final", "4.2.15.Final")).isNegative();
    assertThat(compare("1.5.19", "1.5.19")).isZero();
    assertThat(compare("42.7.14", "42.7.7")).isPositive();
    assertThat(compare("3.9", "3.18.0")).isNegative();
  }

  static List<Floor> floors() throws IOException {
    List<Floor> floors = new ArrayList<>();
    try (InputStream in = SecurityFloorTest.class.getResourceAsStream("/security-floor.tsv")) {
      assertThat(in).as("security-floor.tsv on the test class path").isNotNull();
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        if (line.isBlank() || line.startsWith("#")) {
          continue;
        }
        String[] cells = line.split("\t");
        assertThat(cells).as("groupId:artifactId, minimum, advisory: " + line).hasSize(3);
        String[] coordinates = cells[0].split(":");
        floors.add(new Floor(coordinates[0], coordinates[1], cells[1].strip(), cells[2].strip()));
      }
    }
    return floors;
  }

  private static List<String> jarsOnClassPath() throws IOException {
    List<String> jars = new ArrayList<>();
    for (URL manifest : Collections.list(SecurityFloorTest.class.getClassLoader().getResources("META-INF/MANIFEST.MF"))) {
      String url = manifest.toString();
      if (url.startsWith("jar:")) {
        jars.add(url.substring(0, url.indexOf("!/")));
      }
    }
    return jars;
  }

  private static Optional<String> resolvedVersion(List<String> jars, Floor floor) {
    Pattern layout = Pattern.compile("/" + Pattern.quote(floor.group().replace('.', '/')) + "/"
      + Pattern.quote(floor.artifact()) + "/([^/]+)/" + Pattern.quote(floor.artifact()) + "-\\1(-[^/]+)?\\.jar$");
    return jars.stream().map(layout::matcher).filter(Matcher::find).map(matcher -> matcher.group(1))
      .min(SecurityFloorTest::compare);
  }

  /** Numeric parts compared as numbers, left to right; a qualifier such as {@code Final} is ignored. */
  static int compare(String left, String right) {
    List<Long> a = numbers(left);
    List<Long> b = numbers(right);
    for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
      int order = Long.compare(i < a.size() ? a.get(i) : 0, i < b.size() ? b.get(i) : 0);
      if (order != 0) {
        return order;
      }
    }
    return 0;
  }

  private static List<Long> numbers(String version) {
    List<Long> numbers = new ArrayList<>();
    Matcher digits = Pattern.compile("\\d+").matcher(version);
    while (digits.find()) {
      numbers.add(Long.parseLong(digits.group()));
    }
    return numbers;
  }
}
