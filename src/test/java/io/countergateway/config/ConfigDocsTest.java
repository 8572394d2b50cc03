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
 * The docs name exactly the keys the definitions ({@link ConfigDef}) declare, with their defaults.
 *
 * <ul>
 *   <li><b>README</b>: the table between the two {@code configuration keys} markers is {@link ConfigDef#markdownTable()}
 *   (one row per key), so it names no key the code lacks, misses none and states each definition's default. Run
 *   {@code mvn test -Dtest=ConfigDocsTest -Dconfig.docs.write=true} to write it after changing a definition.</li>
 *   <li><b>conf/gateway.yaml</b>, the default file, documents every key. A key with a fixed default is set there
 *   (not commented out) to exactly that default; a key without one (derived, required or optional) and every
 *   per-entry key ({@code namespaces.<name>.*}, {@code rollups[].*}) appears at least once, set or as a commented-out
 *   line. A commented-out setting is a comment whose text is a YAML {@code key: value} line (or a {@code - } list
 *   item): removing {@code "# "} must leave valid YAML, so prose comments must not start with {@code word:}.</li>
 *   <li><b>conf/postgres.yaml, conf/mysql.yaml, conf/kubernetes.yaml, conf/container.yaml</b> (the k8s ConfigMap and the
 *   image's default; the k8s
 *   overlays hold no configuration file, only {@code CG_*} variables, which {@code KubernetesManifestsTest} checks)
 *   set only what their setup needs: every key they name, set or commented out, must exist.</li>
 * </ul>
 * In every file, each value stated, set or commented out, must be one its key accepts.
 */
@DisplayName("The README table and the shipped configuration files against the key definitions")
class ConfigDocsTest {
  static final Path README = Path.of("README.md");
  static final String BEGIN = "<!-- configuration keys: generated from the definitions (ConfigDef), checked by ConfigDocsTest -->";
  static final String END = "<!-- end of configuration keys -->";
  private static final Pattern COMMENTED_SETTING =
    Pattern.compile("^(\\s*)# ?(\\s*(?:- )?(?:\\{\\s*)?[A-Za-z][A-Za-z0-9_-]*:(?:\\s.*)?)$");
  private static final Pattern ROW = Pattern.compile("^\\| `([^`]+)` \\| ([^|]*?) \\|");

  @Test
  @DisplayName("the README's configuration table is the one the definitions give")
  void readmeTable() throws IOException {
    String readme = Files.readString(README);
    int begin = readme.indexOf(BEGIN);
    int end = readme.indexOf(END);
    assertThat(begin).as("README markers " + BEGIN + " … " + END).isNotNegative();
    assertThat(end).isGreaterThan(begin);
    String documented = readme.substring(begin + BEGIN.length(), end).strip() + "\n";
    String expected = ConfigDef.markdownTable();
    if (!documented.equals(expected) && Boolean.getBoolean("config.docs.write")) {
      Files.writeString(README, readme.substring(0, begin + BEGIN.length()) + "\n" + expected + readme.substring(end));
      return;
    }
    assertThat(tableProblems(documented)).as("README configuration table").isEmpty();
    assertThat(documented).as("README configuration table (write it with -Dconfig.docs.write=true)").isEqualTo(expected);
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
  @DisplayName("conf/gateway.yaml documents every key, each key with a fixed default set to it")
  void defaultFileIsComplete() throws IOException {
    assertThat(fileProblems(Path.of("conf/gateway.yaml"), true)).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"conf/postgres.yaml", "conf/mysql.yaml", "conf/kubernetes.yaml", "conf/container.yaml"})
  @DisplayName("the other shipped files name only existing keys, with values they accept")
  void partialFilesNameRealKeys(String file) throws IOException {
    assertThat(fileProblems(Path.of(file), false)).isEmpty();
  }

  @Test
  @DisplayName("the check finds a wrong default, a missing key, a commented-out default, an unknown key and a bad value")
  void checkFindsDrift(@TempDir Path dir) throws IOException {
    String original = Files.readString(Path.of("conf/gateway.yaml"));
    Path file = dir.resolve("gateway.yaml");
    Files.writeString(file, original.replace("  maxKeys: 1000 ", "  maxKeys: 999  ")
      .replace("  maxDelayMs: 2 ", "  # maxDelayMs: 2")
      .replace("  level: info ", "  levl: info  ")
      .replace("  leaseMs: 15000 ", "  leaseMs: 10   ")
      .replace("maxRangeBuckets: 1000, ", ""));
    assertThat(fileProblems(file, true)).containsExactlyInAnyOrder(
      "batching.maxKeys: set to 999, the definition's default is 1000",
      "batching.maxDelayMs: missing (it is commented out)",
      "logging.levl: no such key",
      "logging.level: missing",
      "lanes.leaseMs: must be between 300 and 600000, got 10",
      "lanes.leaseMs: set to 10, the definition's default is 15000",
      "namespaces.<name>.window.maxRangeBuckets: missing");
    String table = ConfigDef.markdownTable();
    assertThat(tableProblems(table.replace("`2` | 0 – 60000", "`5` | 0 – 60000").replace("`lanes.leaseMs`", "`lanes.leaseMz`")))
      .containsExactlyInAnyOrder("batching.maxDelayMs: states default 5, the definition says 2", "lanes.leaseMz: no such key",
        "lanes.leaseMs: missing");
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
    if (complete) {
      for (ConfigKey<?> key : ConfigDef.allKeys()) {
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
