package io.countergateway.ops;

import org.w3c.dom.Element;

import javax.xml.parsers.DocumentBuilderFactory;
import java.nio.file.Path;

/** This project's pom.xml, read as the tests of what it builds (the library jar, the image) need it. */
final class PomFile {
  private PomFile() {
  }

  static Element root() {
    try {
      return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("pom.xml").toFile())
        .getDocumentElement();
    } catch (Exception e) {
      throw new AssertionError("pom.xml: " + e.getMessage(), e);
    }
  }

  /** The project's version (the first {@code <version>}, the project's own). */
  static String version() {
    return root().getElementsByTagName("version").item(0).getTextContent().strip();
  }

  /** The version of the dependency {@code artifactId} as pom.xml declares it (its first declaration). */
  static String dependencyVersion(String artifactId) {
    var dependencies = root().getElementsByTagName("dependency");
    for (int i = 0; i < dependencies.getLength(); i++) {
      Element dependency = (Element) dependencies.item(i);
      if (artifactId.equals(dependency.getElementsByTagName("artifactId").item(0).getTextContent().strip())) {
        return dependency.getElementsByTagName("version").item(0).getTextContent().strip();
      }
    }
    throw new AssertionError("pom.xml declares no dependency " + artifactId);
  }

  /** A {@code <properties>} entry, unresolved. */
  static String property(String name) {
    return root().getElementsByTagName(name).item(0).getTextContent().strip();
  }
}
