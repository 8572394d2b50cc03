package io.countergateway.config;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The docs name exactly the keys the definitions ({@link ConfigDef}) declare, with their defaults, and the shipped
 * files show what a user sets without restating the rest.
 *
 * <ul>
 *   <li><b>docs/configuration.md</b>: the tables between the two {@code configuration keys} markers are
 *   {@link ConfigDef#markdownTable()} (one per importance, the high keys first, one row per key), so they name no key
 *   the code lacks, miss none and state each definition's default. Run
 *   {@code mvn test -Dtest=ConfigDocsTest -Dconfig.docs.write=true} to write them after changing a definition.</li>
 *   <li><b>conf/gateway.yaml</b>, the default file, shows every key of high importance (what a user sets): one with a
 *   fixed default is set there (not commented out) to exactly that default; one without (derived, required or
 *   optional) and every per-entry one ({@code namespaces.<name>.slots}) appears at least once, set or as a
 *   commented-out line. A commented-out setting is a comment whose text is a YAML {@code key: value} line (or a
 *   {@code - } list item): removing {@code "# "} must leave valid YAML, so prose comments must not start with
 *   {@code word:}.</li>
 *   <li><b>conf/postgres.yaml, conf/mysql.yaml, conf/kubernetes.yaml, conf/container.yaml</b> (the k8s ConfigMap and the
 *   image's default; the k8s overlays hold no configuration file, only {@code CG_*} variables, which
 *   {@code KubernetesManifestsTest} checks) set only what their setup needs: every key they name, set or commented
 *   out, must exist.</li>
 * </ul>
 * In every file, each value stated, set or commented out, must be one its key accepts, and no key but a high one is
 * set to its default: the rest is documented in docs/configuration.md, not restated.
 */
@DisplayName("The configuration table of the docs and the shipped configuration files against the key definitions")
class ConfigDocsTest {
  static final Path DOCS = Path.of("docs", "configuration.md");
  static final String BEGIN = "<!-- configuration keys: generated from the definitions (ConfigDef), checked by ConfigDocsTest -->";
  static final String END = "<!-- end of configuration keys -->";
  private static final Pattern COMMENTED_SETTING =
    Pattern.compile("^(\\s*)# ?(\\s*(?:- )?(?:\\{\\s*)?[A-Za-z][A-Za-z0-9_-]*:(?:\\s.*)?)$");
  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| ([^|]*?) \\|");

  @Test
  @DisplayName("the configuration table of docs/configuration.md is the one the definitions give")
  void docsTable() throws IOException {
    String docs = Files.readString(DOCS);
    int begin = docs.indexOf(BEGIN);
    int end = docs.indexOf(END);
    assertThat(begin).as(DOCS + " markers " + BEGIN + " … " + END).isNotNegative();
    assertThat(end).isGreaterThan(begin);
    String documented = docs.substring(begin + BEGIN.length(), end).strip() + "\n";
    String expected = ConfigDef.markdownTable();
    if (!documented.equals(expected) && Boolean.getBoolean("config.docs.write")) {
      Files.writeString(DOCS, docs.substring(0, begin + BEGIN.length()) + "\n" + expected + docs.substring(end));
      return;
    }
    assertThat(tableProblems(documented)).as(DOCS + " configuration table").isEmpty();
    assertThat(documented).as(DOCS + " configuration table (write it with -Dconfig.docs.write=true)").isEqualTo(expected);
  }

  /** Keys the table names that the code lacks, keys it misses, and defaults other than the definitions'. */
  static List<String> tableProblems(String table) {
    List<String> problems = new ArrayList<>();
    Map<String, String> defaults = new LinkedHashMap<>();
    for (String line : table.split("\n")) {
      Matcher row = ROW.matcher(line);
      if (row.find()) {
        defaults.put(row.group(1), row.group(2).replace("`", "").replace("\\|", "|").strip());
      }
    }
    Map<String, ConfigKey<?>> byName = ConfigDef.allKeys().stream()
      .collect(Collectors.toMap(ConfigKey::name, key -> key, (a, b) -> a, LinkedHashMap::new));
    defaults.forEach((name, stated) -> {
      ConfigKey<?> key = byName.get(name);
      if (key == null) {
        problems.add(name + ": no such key");
      } else if (!stated.equals(key.defaultText().replace("`", ""))) {
        problems.add(name + ": states default " + stated + ", the definition says " + key.defaultText());
      }
    });
    byName.keySet().stream().filter(name -> !defaults.containsKey(name)).forEach(name -> problems.add(name + ": missing"));
    return problems;
  }

  @Test
  @DisplayName("conf/gateway.yaml shows every key a user sets, each with a fixed default set to it, and restates no other default")
  void defaultFileIsComplete() throws IOException {
    assertThat(fileProblems(Path.of("conf/gateway.yaml"), true)).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"conf/postgres.yaml", "conf/mysql.yaml", "conf/kubernetes.yaml", "conf/container.yaml"})
  @DisplayName("the other shipped files name only existing keys, with values they accept, and restate no default but a high key's")
  void partialFilesNameRealKeys(String file) throws IOException {
    assertThat(fileProblems(Path.of(file), false)).isEmpty();
  }

  @Test
  @DisplayName("the check finds a wrong default, a missing key, a commented-out default, a restated default, an unknown key and a bad value")
  void checkFindsDrift(@TempDir Path dir) throws IOException {
    String original = Files.readString(Path.of("conf/gateway.yaml"));
    Path file = dir.resolve("gateway.yaml");
    Files.writeString(file, original.replace("  port: 8080 ", "  port: 9090 ")
      .replace("  name: counters", "  # name: counters")
      .replace("  dataDir: ./data ", "  dataDr: ./data  ")
      .replace("journal:\n", "journal:\n  fsync: always\n  segmentBytes: 1\n")
      .replace("window: { bucket: hour }", "window: { retention: 30d }"));
    assertThat(fileProblems(file, true)).containsExactlyInAnyOrder(
      "http.port: set to 9090, the definition's default is 8080",
      "database.name: missing (it is commented out)",
      "database.dataDr: no such key",
      "database.dataDir: missing",
      "journal.fsync: restates its default (always): only a high key does",
      "journal.segmentBytes: must be between 65536 and 268435456, got 1",
      "namespaces.<name>.window.retention: restates its default (30d): only a high key does",
      "namespaces.<name>.window.bucket: missing");
    String table = ConfigDef.markdownTable();
    assertThat(tableProblems(table.replace("`2ms` | duration", "`5ms` | duration").replace("`lanes.lease`", "`lanes.leaseMz`")))
      .containsExactlyInAnyOrder("batching.maxDelay: states default 5ms, the definition says 2ms", "lanes.leaseMz: no such key",
        "lanes.lease: missing");
  }

  /** The problems of one file; {@code complete}: it must document every key (the default file). */
  static List<String> fileProblems(Path file, boolean complete) throws IOException {
    String text = Files.readString(file);
    List<String> problems = new ArrayList<>();
    Map<String, Object> set = settings(yaml(text), problems);
    Map<String, Object> named = settings(yaml(uncomment(text)), problems);
    for (Map.Entry<String, Object> entry : named.entrySet()) {
      ConfigKey<?> key = ConfigDef.find(entry.getKey());
      if (entry.getValue() != null) {
        try {
          key.parse(entry.getKey(), entry.getValue());
        } catch (ConfigException e) {
          problems.add(e.getMessage());
        }
      }
    }
    for (Map.Entry<String, Object> entry : set.entrySet()) {
      ConfigKey<?> key = ConfigDef.find(entry.getKey());
      if (key.importance() != ConfigKey.Importance.HIGH && key.defaultKind() == ConfigKey.DefaultKind.VALUE
        && entry.getValue() != null && Objects.equals(parsedOrNull(key, entry.getValue()), key.defaultValue())) {
        problems.add(key.name() + ": restates its default (" + key.defaultText() + "): only a high key does");
      }
    }
    if (complete) {
      for (ConfigKey<?> key : ConfigDef.allKeys()) {
        if (key.importance() != ConfigKey.Importance.HIGH) {
          continue;
        }
        boolean fixedDefault = key.defaultKind() == ConfigKey.DefaultKind.VALUE && !key.perEntry();
        Map<String, Object> where = fixedDefault ? set : named;
        if (where.keySet().stream().noneMatch(key::matches)) {
          problems.add(key.name() + ": missing" + (fixedDefault && named.containsKey(key.name()) ? " (it is commented out)" : ""));
        } else if (fixedDefault) {
          Object value = set.get(key.name());
          if (value != null && !Objects.equals(parsedOrNull(key, value), key.defaultValue())) {
            problems.add(key.name() + ": set to " + value + ", the definition's default is " + key.defaultText());
          }
        }
      }
    }
    return problems.stream().distinct().toList();
  }

  /** The value as its key reads it; null for a value it refuses (reported apart). */
  private static Object parsedOrNull(ConfigKey<?> key, Object value) {
    try {
      return key.parse(key.name(), value);
    } catch (ConfigException refused) {
      return null;
    }
  }

  /** {@code text} with every commented-out setting turned into a setting. */
  static String uncomment(String text) {
    return text.lines().map(line -> {
      Matcher setting = COMMENTED_SETTING.matcher(line);
      return setting.matches() ? setting.group(1) + setting.group(2) : line;
    }).collect(Collectors.joining("\n", "", "\n"));
  }

  private static Object yaml(String text) {
    return new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
  }

  /** Every key of the tree by its dotted path ({@code namespaces.likes.slots}, {@code rollups[0].table}); unknown ones are problems. */
  static Map<String, Object> settings(Object tree, List<String> problems) {
    Map<String, Object> settings = new LinkedHashMap<>();
    walk(tree, "", settings, problems);
    return settings;
  }

  private static void walk(Object node, String path, Map<String, Object> settings, List<String> problems) {
    ConfigKey<?> key = path.isEmpty() ? null : ConfigDef.find(path);
    if (key != null) {
      settings.put(path, node);
      if (key.type() == ConfigKey.MAPPINGS && node instanceof List<?> items) {
        for (int i = 0; i < items.size(); i++) {
          walk(items.get(i), path + "[" + i + "]", settings, problems);
        }
      }
    } else if (node instanceof Map<?, ?> map) {
      if (!path.isEmpty() && !isSection(path)) {
        problems.add(path + ": no such key or section");
      }
      map.forEach((name, child) -> walk(child, path.isEmpty() ? String.valueOf(name) : path + "." + name, settings, problems));
    } else if (node == null && isSection(path)) {
      // a section whose keys are all commented out (management:)
    } else {
      problems.add(path + ": no such key");
    }
  }

  /** Whether {@code path} leads to keys: {@code namespaces}, {@code namespaces.likes.beacon}, {@code rollups[0]}. */
  private static boolean isSection(String path) {
    Set<String> prefixes = new LinkedHashSet<>();
    for (ConfigKey<?> key : ConfigDef.allKeys()) {
      String name = key.name();
      for (int dot = name.indexOf('.'); dot > 0; dot = name.indexOf('.', dot + 1)) {
        prefixes.add(name.substring(0, dot));
      }
    }
    return prefixes.stream().anyMatch(prefix -> ConfigDef.patternRegex(prefix).matcher(path).matches());
  }
}
