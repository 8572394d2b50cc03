package io.countergateway.testing;

import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.stream.Stream;

/**
 * Debian's headless Chromium driven through its chromedriver, with a throw-away profile and the page's console kept,
 * for the tests that need a real browser. {@link #installed()} tells whether the machine has both ({@code .ci/run}
 * installs them); tests skip without.
 */
public final class HeadlessChromium implements AutoCloseable {
  public static final File CHROMIUM = new File(System.getProperty("chromium.binary", "/usr/bin/chromium"));
  public static final File CHROMEDRIVER = new File(System.getProperty("chromedriver.binary", "/usr/bin/chromedriver"));

  public final ChromeDriver browser;
  private final Path profile;

  private HeadlessChromium(ChromeDriver browser, Path profile) {
    this.browser = browser;
    this.profile = profile;
  }

  public static boolean installed() {
    return CHROMIUM.canExecute() && CHROMEDRIVER.canExecute();
  }

  public static HeadlessChromium start() {
    return start(new String[0]);
  }

  /** {@code arguments}: Chromium's switches besides the ones every test needs (a User-Agent, a Blink feature off). */
  public static HeadlessChromium start(String... arguments) {
    try {
      Path profile = Files.createTempDirectory("chromium-profile");
      System.setProperty("webdriver.chrome.driver", CHROMEDRIVER.getPath());
      ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM).addArguments("--headless=new", "--no-sandbox",
        "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,900",
        "--user-data-dir=" + profile);
      options.addArguments(arguments);
      options.setCapability("goog:loggingPrefs", Map.of(LogType.BROWSER, "ALL"));
      // the system chromedriver, given explicitly, so Selenium Manager has nothing to look up or download
      ChromeDriver browser = new ChromeDriver(new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER).build(),
        options);
      browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(20)).scriptTimeout(Duration.ofSeconds(10));
      return new HeadlessChromium(browser, profile);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The console messages of level SEVERE (errors, failed loads, policy violations) since the last call. */
  public List<String> consoleErrors() {
    return browser.manage().logs().get(LogType.BROWSER).getAll().stream()
      .filter(entry -> entry.getLevel().intValue() >= Level.SEVERE.intValue()).map(LogEntry::getMessage).toList();
  }

  @Override
  public void close() {
    browser.quit();
    try (Stream<Path> files = Files.walk(profile)) {
      files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
