package io.countergateway.ops;

import io.countergateway.config.ConfigException;
import io.countergateway.config.ConfigLoader;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.config.GatewayConfig;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The container image as pom.xml defines it for Jib. This machine cannot pull the base image, so the image is never
 * built here: this test is what holds the definition to what docs/operations.md promises (a base pinned by digest, a
 * non-root user, the gateway's main class on port 8080, {@code conf/container.yaml} by default, the journal on a
 * volume) and loads that file with the documented environment through the gateway's own strict configuration.
 */
class ImageDefinitionTest {
  private static final Path CONTAINER_CONFIG = Path.of("conf/container.yaml");

  @Test
  @DisplayName("the image starts from eclipse-temurin 17 pinned by digest, as a non-root user, running Main on port 8080")
  void baseUserEntrypointAndPort() throws Exception {
    Element jib = jibConfiguration();
    assertThat(text(jib, "from", "image")).matches("eclipse-temurin:17-jre@sha256:[0-9a-f]{64}");
    Element container = child(jib, "container");
    String user = text(container, "user");
    assertThat(user).as("uid:gid").matches("[0-9]+:[0-9]+");
    assertThat(Integer.parseInt(user.substring(0, user.indexOf(':')))).as("the image's uid").isNotZero();
    // no entrypoint of our own: Jib's runs java with the JVM flags and the main class
    assertThat(children(container, "entrypoint")).isEmpty();
    assertThat(text(container, "mainClass")).isEqualTo("${main.class}");
    assertThat(PomFile.property("main.class")).isEqualTo(io.countergateway.Main.class.getName());
    assertThat(texts(child(container, "ports"), "port")).containsExactly(Integer.toString(containerConfig(env()).getHttp().getPort()));
    assertThat(texts(child(container, "jvmFlags"), "jvmFlag")).contains("-XX:+ExitOnOutOfMemoryError");
  }

  @Test
  @DisplayName("the image and the Kubernetes manifests run conf/jvm.options, the heap as 57 % of the container's memory limit, with malloc in 2 arenas")
  void jvmOptionsOfEveryLaunch() throws Exception {
    List<String> expected = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of("conf/jvm.options"))) {
      if (!line.isBlank() && !line.startsWith("#")) {
        expected.add(line.startsWith("-Xmx") ? "-XX:MaxRAMPercentage=57" : line.strip());
      }
    }
    assertThat(expected).contains("-XX:+ExitOnOutOfMemoryError", "-XX:MaxRAMPercentage=57");
    Element container = child(jibConfiguration(), "container");
    assertThat(texts(child(container, "jvmFlags"), "jvmFlag")).as("pom.xml").containsExactlyElementsOf(expected);
    assertThat(text(container, "environment", "MALLOC_ARENA_MAX")).isEqualTo("2");
    for (String manifest : List.of("k8s/base/statefulset.yaml", "k8s/overlays/sidecar/web-deployment.yaml")) {
      List<String> lines = Files.readAllLines(Path.of(manifest));
      int name = lines.indexOf(lines.stream().filter(l -> l.strip().equals("- name: JAVA_TOOL_OPTIONS")).findFirst()
        .orElseThrow(() -> new AssertionError(manifest + " sets no JAVA_TOOL_OPTIONS")));
      List<String> options = new ArrayList<>(List.of(lines.get(name + 1).strip().replaceFirst("^value: ", "").split("\\s+")));
      options.removeIf(option -> option.startsWith("-XX:ActiveProcessorCount="));
      assertThat(options).as(manifest).containsExactlyElementsOf(expected);
    }
  }

  @Test
  @DisplayName("the image runs conf/container.yaml by default and keeps the journal on a volume its user can write")
  void defaultConfigAndJournalVolume() throws Exception {
    Element jib = jibConfiguration();
    Element container = child(jib, "container");
    String configPath = text(container, "environment", ConfigLoader.CONFIG_FILE_VARIABLE);
    Map<String, String> copied = new HashMap<>();
    for (Element path : children(child(child(jib, "extraDirectories"), "paths"), "path")) {
      copied.put(text(path, "into"), text(path, "from"));
    }
    Path inImage = Path.of(configPath);
    assertThat(copied).as("extra directories").containsEntry(inImage.getParent().toString(), CONTAINER_CONFIG.getParent().toString());
    assertThat(inImage.getFileName()).isEqualTo(CONTAINER_CONFIG.getFileName());

    Path journal = Path.of(containerConfig(env()).getJournal().getDir());
    List<String> volumes = texts(child(container, "volumes"), "volume");
    String volume = volumes.stream().filter(v -> journal.startsWith(v)).findFirst()
      .orElseThrow(() -> new AssertionError("journal.dir " + journal + " is on no volume of " + volumes));
    // the volume's directory is in the image (a new volume copies its mode), writable by the image's user
    String source = copied.get("/");
    assertThat(source).as("an extra directory laid at /").isNotNull();
    assertThat(Path.of(source, volume)).isDirectory();
    List<Element> permissions = children(child(child(jib, "extraDirectories"), "permissions"), "permission");
    assertThat(permissions).anySatisfy(permission -> {
      assertThat(text(permission, "file")).isEqualTo(volume);
      assertThat(text(permission, "mode")).isEqualTo("777");
    });
  }

  @Test
  @DisplayName("mvn -Pimage package builds the image as target/jib-image.tar with Jib's buildTar, no daemon needed")
  void imageProfileBuildsATar() throws Exception {
    Element jib = jibConfiguration();
    assertThat(text(jib, "outputPaths", "tar")).isEqualTo("${project.build.directory}/jib-image.tar");
    Element profile = children(child(pom(), "profiles"), "profile").stream()
      .filter(candidate -> text(candidate, "id").equals("image")).findFirst()
      .orElseThrow(() -> new AssertionError("no image profile"));
    Element plugin = plugin(child(child(profile, "build"), "plugins"), "jib-maven-plugin");
    Element execution = children(child(plugin, "executions"), "execution").get(0);
    assertThat(text(execution, "phase")).isEqualTo("package");
    assertThat(texts(child(execution, "goals"), "goal")).containsExactly("buildTar");
  }

  @Test
  @DisplayName("conf/container.yaml with the documented environment serves 0.0.0.0 with tokens, on the database the variables name")
  void containerConfigWithTheDocumentedEnvironment(@TempDir Path dir) throws IOException {
    Path password = Files.writeString(dir.resolve("db-password"), "secret\n");
    Map<String, String> env = env();
    env.put("CG_DATABASE_HOST", "db.internal");
    env.put("CG_DATABASE_PASSWORD_FILE", password.toString());
    GatewayConfig config = containerConfig(env);
    assertThat(config.getHttp().getHost()).isEqualTo("0.0.0.0");
    assertThat(config.getAuth().isEnabled()).as("tokens from the mounted file").isTrue();
    assertThat(config.getDatabase().getKind()).isEqualTo(DatabaseOptions.Kind.POSTGRES);
    assertThat(config.getDatabase().getHost()).isEqualTo("db.internal");
    assertThat(config.getDatabase().getPassword()).isEqualTo("secret");
    assertThat(config.getJournal().isEnabled()).isTrue();
  }

  @Test
  @DisplayName("conf/container.yaml refuses to start without its tokens file, and serves without tokens only when told to")
  void containerConfigFailsClosed() {
    Map<String, String> noSecret = new HashMap<>();
    assertThatThrownBy(() -> GatewayConfig.fromJson(ConfigLoader.applyEnvironment(raw(), noSecret)))
      .isInstanceOf(ConfigException.class).hasMessageStartingWith("auth.tokensFile: cannot read");
    Map<String, String> noTokens = new HashMap<>(Map.of("CG_AUTH_TOKENS_FILE", ""));
    assertThatThrownBy(() -> GatewayConfig.fromJson(ConfigLoader.applyEnvironment(raw(), noTokens)))
      .isInstanceOf(ConfigException.class).hasMessageStartingWith("http.host:");
    Map<String, String> anonymous = new HashMap<>(Map.of("CG_AUTH_TOKENS_FILE", "", "CG_AUTH_ANONYMOUS", "true"));
    GatewayConfig config = GatewayConfig.fromJson(ConfigLoader.applyEnvironment(raw(), anonymous));
    assertThat(config.getAuth().isEnabled()).isFalse();
    assertThat(config.getAuth().isAnonymous()).isTrue();
  }

  /** The environment a container gets when its tokens Secret is mounted (here a stand-in file in its place). */
  private static Map<String, String> env() {
    try {
      Path tokens = Files.createTempFile("stand-in-tokens", "");
      tokens.toFile().deleteOnExit();
      Files.writeString(tokens, "stand-in-token-0123456789:write\n");
      return new HashMap<>(Map.of("CG_AUTH_TOKENS_FILE", tokens.toString()));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static GatewayConfig containerConfig(Map<String, String> env) {
    return GatewayConfig.fromJson(ConfigLoader.applyEnvironment(raw(), env));
  }

  @SuppressWarnings("unchecked")
  private static JsonObject raw() {
    try {
      return new JsonObject(Manifests.YAML.readValue(CONTAINER_CONFIG.toFile(), Map.class));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static Element pom() {
    return PomFile.root();
  }

  private static Element jibConfiguration() throws Exception {
    return child(plugin(child(child(pom(), "build"), "plugins"), "jib-maven-plugin"), "configuration");
  }

  private static Element plugin(Element plugins, String artifactId) {
    return children(plugins, "plugin").stream().filter(plugin -> text(plugin, "artifactId").equals(artifactId))
      .findFirst().orElseThrow(() -> new AssertionError("no plugin " + artifactId));
  }

  private static List<Element> children(Element parent, String name) {
    List<Element> found = new ArrayList<>();
    NodeList nodes = parent.getChildNodes();
    for (int i = 0; i < nodes.getLength(); i++) {
      Node node = nodes.item(i);
      if (node instanceof Element element && element.getTagName().equals(name)) {
        found.add(element);
      }
    }
    return found;
  }

  private static Element child(Element parent, String name) {
    List<Element> found = children(parent, name);
    assertThat(found).as("<" + name + "> in <" + parent.getTagName() + ">").hasSize(1);
    return found.get(0);
  }

  private static String text(Element parent, String... path) {
    Element element = parent;
    for (String name : path) {
      element = child(element, name);
    }
    return element.getTextContent().strip();
  }

  private static List<String> texts(Element parent, String name) {
    return children(parent, name).stream().map(element -> element.getTextContent().strip()).toList();
  }
}
