package io.countergateway.internal.http;

import io.countergateway.internal.beacon.PageVisit;
import io.countergateway.internal.model.ApiError;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One request of a tracker's script, read as the gateway's beacon reads its own: the site it counts for, the page's
 * path still percent-encoded as the browser wrote it (decoded once where it becomes an id, as the beacon's id is), where
 * the view came from, and why it is not a page view when it is not one.
 *
 * <p>{@code site}: what maps the hit to a namespace (a GoatCounter script's Host, an Umami website id, a Plausible
 * domain; lower case); {@code path}: the URL's path without query or fragment; {@code visit}: the hit's referrer and
 * the {@code utm_*} parameters of the page's query; {@code skipped}: null for a page view, else why it is answered and
 * not counted ({@code bot}, {@code event}, {@code identify}, {@code performance}, {@code engagement}), as
 * {@code X-Counter-Dropped} names it.
 *
 * <p>Read leniently where the scripts are loose (a query's stray {@code %} is a literal, a parameter given twice
 * counts its first value) and refused (400, naming the field and its rule) where a view cannot be read at all: no
 * page, a body that is not the JSON object the script sends.
 */
record TrackerHit(String site, String path, PageVisit visit, String skipped) {
  static final String BOT = "bot";
  static final String EVENT = "event";
  static final String ENGAGEMENT = "engagement";
  private static final List<String> UMAMI_TYPES = List.of("event", "identify", "performance");

  /**
   * GoatCounter's {@code count.js} (GET image or sendBeacon POST): {@code p} the page's path and query, {@code r} the
   * referrer, {@code q} the page's query, {@code b} the script's bot score (0 for a person), {@code e} true for an
   * event (a click, not a view); {@code t}, {@code s}, {@code rnd} are not read. {@code host}: the Host the script sent
   * to, which names the site as a GoatCounter site's own domain does.
   */
  static TrackerHit goatCounter(String rawQuery, String host) {
    Map<String, String> query = parameters(rawQuery);
    String page = query.get("p");
    if (page == null || page.isEmpty()) {
      throw ApiError.badRequest("invalid_path", "p", "p (the page's path, as count.js sends it) is required");
    }
    String path = pathOf(page);
    String pageQuery = query.containsKey("q") ? stripQuestionMark(query.get("q")) : queryOf(page);
    String bot = query.get("b");
    String skipped = bot != null && !bot.isEmpty() && !bot.equals("0") ? BOT
      : "true".equals(query.get("e")) ? EVENT : null;
    return new TrackerHit(lower(host), path, visit(query.get("r"), pageQuery), skipped);
  }

  /**
   * Umami's {@code script.js}: {@code {"type": "event"|"identify"|"performance", "payload": {"website", "url",
   * "referrer", "name"?, …}}}. A page view is an {@code event} without a {@code name}; a named event, an identify
   * and a performance report are answered, not counted.
   */
  static TrackerHit umami(Buffer body) {
    JsonObject json = object(body);
    Object type = json.getValue("type");
    if (!(type instanceof String text) || !UMAMI_TYPES.contains(text)) {
      throw ApiError.badRequest("invalid_type", "type", "type must be one of " + String.join(", ", UMAMI_TYPES));
    }
    if (!(json.getValue("payload") instanceof JsonObject payload)) {
      throw ApiError.badRequest("invalid_payload", "payload", "payload must be a JSON object");
    }
    String website = requiredText(payload, "website", "payload.website", "invalid_website", "the website id");
    String url = requiredText(payload, "url", "payload.url", "invalid_url", "the page's URL");
    Object name = payload.getValue("name");
    String skipped = !text.equals("event") ? text : name != null && !"".equals(name) ? EVENT : null;
    return new TrackerHit(lower(website), pathOf(url), visit(optionalText(payload, "referrer", "payload.referrer"),
      queryOf(url)), skipped);
  }

  /**
   * Plausible's script: {@code {"n": name, "u": url, "d": domain, "r": referrer|null, …}}, sent as {@code text/plain}.
   * Only {@code pageview} is a view; {@code engagement} (time on page) and custom events are answered, not counted.
   * {@code d} may list several domains, comma-separated: the site is the first.
   */
  static TrackerHit plausible(Buffer body) {
    JsonObject json = object(body);
    String name = requiredText(json, "n", "n", "invalid_name", "the event's name");
    String url = requiredText(json, "u", "u", "invalid_url", "the page's URL");
    String domains = requiredText(json, "d", "d", "invalid_domain", "the site's domain");
    int comma = domains.indexOf(',');
    String domain = (comma < 0 ? domains : domains.substring(0, comma)).strip();
    String skipped = name.equals("pageview") ? null : name.equals(ENGAGEMENT) ? ENGAGEMENT : EVENT;
    return new TrackerHit(lower(domain), pathOf(url), visit(optionalText(json, "r", "r"), queryOf(url)), skipped);
  }

  private static JsonObject object(Buffer body) {
    try {
      return JsonBodies.object(body);
    } catch (DecodeException e) {
      throw ApiError.badRequest("invalid_json", "body", "the body must be the JSON object the tracker's script sends");
    }
  }

  private static String requiredText(JsonObject json, String name, String field, String code, String what) {
    Object value = json.getValue(name);
    if (!(value instanceof String text) || text.isEmpty()) {
      throw ApiError.badRequest(code, field, field + " (" + what + ") must be a non-empty string");
    }
    return text;
  }

  /** A string, or null when absent, null or empty. */
  private static String optionalText(JsonObject json, String name, String field) {
    Object value = json.getValue(name);
    if (value != null && !(value instanceof String)) {
      throw ApiError.badRequest("invalid_referrer", field, field + " (the referrer) must be a string or null");
    }
    return value == null || ((String) value).isEmpty() ? null : (String) value;
  }

  /**
   * The path of {@code url} (absolute, {@code scheme://authority/path?query#fragment}, or a path as GoatCounter sends
   * it), still percent-encoded; {@code /} when an absolute URL has none.
   */
  static String pathOf(String url) {
    String rest = withoutFragment(url);
    int question = rest.indexOf('?');
    if (question >= 0) {
      rest = rest.substring(0, question);
    }
    int scheme = schemeEnd(rest);
    if (scheme < 0) {
      return rest.isEmpty() ? "/" : rest;
    }
    int slash = rest.indexOf('/', scheme);
    return slash < 0 ? "/" : rest.substring(slash);
  }

  /** The raw query of {@code url}, without its {@code ?}; null when it has none. */
  static String queryOf(String url) {
    String rest = withoutFragment(url);
    int question = rest.indexOf('?');
    return question < 0 ? null : rest.substring(question + 1);
  }

  private static String withoutFragment(String url) {
    int hash = url.indexOf('#');
    return hash < 0 ? url : url.substring(0, hash);
  }

  /** Where the authority of {@code scheme://authority…} starts, or -1 when {@code url} has no scheme. */
  private static int schemeEnd(String url) {
    int colon = url.indexOf("://");
    if (colon <= 0) {
      return -1;
    }
    for (int i = 0; i < colon; i++) {
      char c = url.charAt(i);
      if (!(Character.isLetterOrDigit(c) && c < 0x80 || c == '+' || c == '-' || c == '.')) {
        return -1;
      }
    }
    return colon + 3;
  }

  private static String stripQuestionMark(String query) {
    return query.startsWith("?") ? query.substring(1) : query;
  }

  private static PageVisit visit(String referrer, String pageQuery) {
    Map<String, String> campaign = parameters(pageQuery);
    PageVisit visit = new PageVisit(emptyAsNull(referrer), emptyAsNull(campaign.get("utm_source")),
      emptyAsNull(campaign.get("utm_medium")), emptyAsNull(campaign.get("utm_campaign")));
    return visit.equals(PageVisit.NONE) ? PageVisit.NONE : visit;
  }

  /**
   * The parameters of a raw query, decoded ({@code +} as a space, a stray {@code %} as itself, bytes that are not UTF-8
   * as U+FFFD); the first value of a name given twice.
   */
  static Map<String, String> parameters(String rawQuery) {
    Map<String, String> parameters = new HashMap<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return parameters;
    }
    for (String parameter : rawQuery.split("&")) {
      int equals = parameter.indexOf('=');
      String name = decoded(equals < 0 ? parameter : parameter.substring(0, equals));
      if (!name.isEmpty()) {
        parameters.putIfAbsent(name, equals < 0 ? "" : decoded(parameter.substring(equals + 1)));
      }
    }
    return parameters;
  }

  private static String decoded(String raw) {
    return PathSegments.decodeLeniently(raw.replace('+', ' '));
  }

  private static String emptyAsNull(String text) {
    return text == null || text.isEmpty() ? null : text;
  }

  private static String lower(String site) {
    return site == null ? null : site.toLowerCase(java.util.Locale.ROOT);
  }
}
