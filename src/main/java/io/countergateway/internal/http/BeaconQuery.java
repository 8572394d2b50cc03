package io.countergateway.internal.http;

import io.countergateway.internal.beacon.PageVisit;

import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The query of a beacon: {@code format=gif} asks for the pixel; {@code r} (the page's {@code document.referrer}) and
 * {@code utm_source}, {@code utm_medium}, {@code utm_campaign} (the page's own campaign tags, as beacon.js copies them)
 * are where the view came from ({@link PageVisit}); every other parameter is ignored, and named in
 * {@code X-Counter-Ignored-Parameters}. Cache busters ({@code _}, {@code cb}, {@code v}), other tags ({@code fbclid},
 * {@code ref}) and the like are appended by sites, CDNs and link shorteners, so the page view they ride on is counted
 * all the same (the JSON API refuses such a parameter: there it is a mistake). Read leniently, never refused: a
 * malformed escape is taken as written; the first of a repeated parameter counts. Read by the hot path and the router
 * alike.
 */
final class BeaconQuery {
  static final String IGNORED_HEADER = "X-Counter-Ignored-Parameters";
  /** The header names at most this many characters of names, so a long query cannot make a long answer. */
  static final int MAX_HEADER_CHARS = 256;
  /** Each name is shown up to this many characters. */
  static final int MAX_NAME_CHARS = 64;
  /** Ends the header when more names were ignored than it shows. */
  static final String MORE = "...";
  private static final BeaconQuery NONE = new BeaconQuery(false, null, PageVisit.NONE);
  private static final BeaconQuery GIF = new BeaconQuery(true, null, PageVisit.NONE);

  private final boolean gif;
  private final String ignored;
  private final PageVisit visit;

  private BeaconQuery(boolean gif, String ignored, PageVisit visit) {
    this.gif = gif;
    this.ignored = ignored;
    this.visit = visit;
  }

  /** {@code query}: the raw query of the request, null when it has none. */
  static BeaconQuery of(String query) {
    if (query == null || query.isEmpty()) {
      return NONE;
    }
    if (query.equals("format=gif")) {
      return GIF; // the pixel as the snippet and the noscript tag send it
    }
    Boolean gif = null;
    String referrer = null;
    String utmSource = null;
    String utmMedium = null;
    String utmCampaign = null;
    Set<String> ignored = new LinkedHashSet<>();
    for (String parameter : query.split("&")) {
      int equals = parameter.indexOf('=');
      String rawName = equals < 0 ? parameter : parameter.substring(0, equals);
      if (rawName.isEmpty()) {
        continue;
      }
      String name = decoded(rawName);
      if (name.equals("format")) {
        // the first format is the one asked for, as a query parser's first value
        if (gif == null) {
          gif = equals >= 0 && "gif".equals(decoded(parameter.substring(equals + 1)));
        }
        continue;
      }
      String value = equals < 0 ? "" : parameter.substring(equals + 1);
      switch (name) {
        case "r" -> referrer = referrer != null ? referrer : decoded(value);
        case "utm_source" -> utmSource = utmSource != null ? utmSource : decoded(value);
        case "utm_medium" -> utmMedium = utmMedium != null ? utmMedium : decoded(value);
        case "utm_campaign" -> utmCampaign = utmCampaign != null ? utmCampaign : decoded(value);
        default -> ignored.add(shown(name));
      }
    }
    PageVisit visit = referrer == null && utmSource == null && utmMedium == null && utmCampaign == null
      ? PageVisit.NONE : new PageVisit(referrer, utmSource, utmMedium, utmCampaign);
    return new BeaconQuery(Boolean.TRUE.equals(gif), ignored.isEmpty() ? null : header(ignored), visit);
  }

  /** Where the view came from, as the query says; {@link PageVisit#NONE} when it says nothing. */
  PageVisit visit() {
    return visit;
  }

  /** Whether the pixel is asked for ({@code format=gif}). */
  boolean gif() {
    return gif;
  }

  /** The ignored parameters' names, decoded, comma-separated, bounded; null when none was ignored. */
  String ignored() {
    return ignored;
  }

  private static String decoded(String raw) {
    return PathSegments.decodeLeniently(raw.replace('+', ' '));
  }

  /** A name cut to its first characters, anything but visible ASCII (and the list's comma) shown as {@code ?}. */
  private static String shown(String name) {
    StringBuilder shown = new StringBuilder(Math.min(name.length(), MAX_NAME_CHARS));
    for (int i = 0; i < name.length() && i < MAX_NAME_CHARS; i++) {
      char c = name.charAt(i);
      shown.append(c > ' ' && c < 0x7f && c != ',' ? c : '?');
    }
    return shown.toString();
  }

  /** The names joined; past the bound, the names that fit whole, then {@link #MORE}. */
  private static String header(Set<String> names) {
    String all = String.join(",", names);
    if (all.length() <= MAX_HEADER_CHARS) {
      return all;
    }
    int cut = all.lastIndexOf(',', MAX_HEADER_CHARS - MORE.length() - 1);
    return (cut < 0 ? "" : all.substring(0, cut + 1)) + MORE;
  }
}
