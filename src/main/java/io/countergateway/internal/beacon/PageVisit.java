package io.countergateway.internal.beacon;

/**
 * What a page view carries besides its page: the page it came from ({@code referrer}, as the browser gave it, null when
 * none) and the campaign it was tagged with ({@code utm_source}, {@code utm_medium}, {@code utm_campaign}, each null
 * when absent). Every beacon door (the gateway's own beacon and the tracker protocols) fills it from what its script
 * sends; the counting of sources and campaigns reads it.
 */
public record PageVisit(String referrer, String utmSource, String utmMedium, String utmCampaign) {
  /** A view that says nothing about where it came from. */
  public static final PageVisit NONE = new PageVisit(null, null, null, null);
}
