package io.countergateway.config;

import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/** What every beacon route shares: how much body it takes, and the bot patterns added to the crawler list. */
public class BeaconOptions {
  /** sendBeacon bodies are capped at 64 KiB by browsers; nothing larger comes from a page. */
  public static final int DEFAULT_MAX_BODY_BYTES = 65_536;

  private int maxBodyBytes = DEFAULT_MAX_BODY_BYTES;
  private List<Pattern> botPatterns = List.of();

  static BeaconOptions from(ConfigSection section) {
    return new BeaconOptions()
      .setMaxBodyBytes(section.intValue("maxBodyBytes", DEFAULT_MAX_BODY_BYTES))
      .setBotPatterns(section.stringList("botPatterns"));
  }

  public int getMaxBodyBytes() {
    return maxBodyBytes;
  }

  public BeaconOptions setMaxBodyBytes(int maxBodyBytes) {
    this.maxBodyBytes = Checks.range("beacon.maxBodyBytes", maxBodyBytes, 0, 1_048_576);
    return this;
  }

  /** Case-insensitive regular expressions found anywhere in a User-Agent, on top of the crawler list. */
  public List<Pattern> getBotPatterns() {
    return botPatterns;
  }

  public BeaconOptions setBotPatterns(List<String> patterns) {
    this.botPatterns = patterns.stream().map(BeaconOptions::compile).toList();
    return this;
  }

  private static Pattern compile(String pattern) {
    try {
      return Pattern.compile(pattern, Pattern.CASE_INSENSITIVE);
    } catch (PatternSyntaxException e) {
      throw new ConfigException("beacon.botPatterns", "'" + pattern + "' is not a regular expression: "
        + e.getDescription());
    }
  }
}
