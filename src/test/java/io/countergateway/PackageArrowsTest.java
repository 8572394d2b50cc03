package io.countergateway;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The package graph of {@code src/main/java}, read from the import lines: arrows point down only. The root composes,
 * the doors ({@code http}, {@code bus}) translate into the {@code write} path, which writes through {@code store};
 * no package reaches one that reaches it back.
 */
@DisplayName("The packages of the product")
class PackageArrowsTest {
  private static final String BASE = "io.countergateway";
  private static final Pattern PACKAGE = Pattern.compile("^package\\s+([\\w.]+);", Pattern.MULTILINE);
  private static final Pattern IMPORT = Pattern.compile("^import\\s+(?:static\\s+)?([\\w.]+)\\.[\\w*]+;", Pattern.MULTILINE);

  /**
   * Package → the packages of this project it imports: short names, "(root)" for the base, and the internal packages
   * without their common {@code internal.} (every package but the root and {@code config} is one).
   */
  private static final Map<String, Set<String>> imports = new TreeMap<>();

  @BeforeAll
  static void readImports() throws IOException {
    try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
      files.filter(file -> file.toString().endsWith(".java")).forEach(PackageArrowsTest::read);
    }
  }

  private static void read(Path file) {
    String text;
    try {
      text = Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Matcher declared = PACKAGE.matcher(text);
    if (!declared.find() || !declared.group(1).startsWith(BASE)) {
      return;
    }
    String from = shortName(declared.group(1));
    Set<String> targets = imports.computeIfAbsent(from, p -> new TreeSet<>());
    Matcher imported = IMPORT.matcher(text);
    while (imported.find()) {
      // the imported type's package: drop the capitalised segments (the type and its nested types)
      List<String> parts = new ArrayList<>(List.of(imported.group(1).split("\\.")));
      while (!parts.isEmpty() && Character.isUpperCase(parts.get(parts.size() - 1).charAt(0))) {
        parts.remove(parts.size() - 1);
      }
      String target = String.join(".", parts);
      if (target.startsWith(BASE) && !shortName(target).equals(from)) {
        targets.add(shortName(target));
      }
    }
  }

  private static String shortName(String pkg) {
    return pkg.equals(BASE) ? "(root)" : pkg.substring(BASE.length() + 1).replaceFirst("^internal\\.", "");
  }

  private static boolean reaches(String from, String to, Set<String> seen) {
    for (String next : imports.getOrDefault(from, Set.of())) {
      if (next.equals(to) || seen.add(next) && reaches(next, to, seen)) {
        return true;
      }
    }
    return false;
  }

  @Test
  @DisplayName("no package imports one that imports it back, directly or through others")
  void noCycles() {
    List<String> cycles = new ArrayList<>();
    imports.forEach((pkg, targets) -> targets.stream()
      .filter(target -> reaches(target, pkg, new TreeSet<>()))
      .forEach(target -> cycles.add(pkg + " -> " + target + " -> … -> " + pkg)));
    assertThat(imports).as("packages read").hasSizeGreaterThan(10);
    assertThat(cycles).as("arrows that come back").isEmpty();
  }

  @Test
  @DisplayName("no sub-package imports the root, which only composes")
  void rootOnlyComposes() {
    imports.forEach((pkg, targets) -> assertThat(targets).as("imports of %s", pkg).doesNotContain("(root)"));
  }

  @Test
  @DisplayName("the configuration, public, names no other package of ours: its types expose nothing internal")
  void configurationStandsAlone() {
    assertThat(imports.get("config")).as("imports of config").isEmpty();
  }

  @Test
  @DisplayName("the write path and the store know no door: they import neither http, bus, ingest nor runtime")
  void writePathKnowsNoDoor() {
    for (String below : List.of("write", "store")) {
      assertThat(imports.get(below)).as("imports of %s", below).doesNotContain("http", "bus", "ingest", "runtime", "read");
    }
  }
}
