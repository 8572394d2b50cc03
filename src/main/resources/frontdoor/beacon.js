/* counter-gateway page-view beacon. Embed:
 *   <script async src="https://counters.example.com/v1/beacon.js" data-namespace="pageviews"></script>
 * data-namespace: a public namespace (default "pageviews"); data-id: the counter id (default: the page's path, as
 * text: /docs/über, /a page; the fragment is not part of it).
 * Sends one beacon per page load: navigator.sendBeacon, else fetch with keepalive, else an image pixel. It carries
 * where the view came from: r, the origin of document.referrer when it is another site (never its path), and the
 * page's own utm_source, utm_medium and utm_campaign.
 * Never throws into the page. */
(function () {
  try {
    var script = document.currentScript;
    if (!script || !script.src) {
      return;
    }
    var namespace = script.getAttribute('data-namespace') || 'pageviews';
    // the pathname is percent-encoded by the browser: decoded once here, encoded once below, so the gateway counts
    // the path as the site wrote it (/docs/über, /a page); a malformed escape is sent as it stands
    var path = location.pathname || '/';
    try {
      path = decodeURIComponent(path);
    } catch (e) {
      // kept encoded: the gateway counts it as written
    }
    var id = script.getAttribute('data-id') || path;
    var url = new URL('beacon/' + encodeURIComponent(namespace) + '/' + encodeURIComponent(id), script.src).href;
    var query = [];
    try {
      var from = document.referrer ? new URL(document.referrer) : null;
      if (from && from.host !== location.host && /^https?:$/.test(from.protocol)) {
        query.push('r=' + encodeURIComponent(from.origin));
      }
    } catch (e) {
      // no referrer that can be read: a direct view
    }
    var tags = ['utm_source', 'utm_medium', 'utm_campaign'];
    var search = typeof URLSearchParams === 'function' ? new URLSearchParams(location.search) : null;
    for (var i = 0; search && i < tags.length; i++) {
      var tag = search.get(tags[i]);
      if (tag) {
        query.push(tags[i] + '=' + encodeURIComponent(tag.slice(0, 200)));
      }
    }
    url += query.length ? '?' + query.join('&') : '';
    var sent = false;
    try {
      sent = typeof navigator.sendBeacon === 'function' && navigator.sendBeacon(url);
    } catch (e) {
      sent = false;
    }
    if (!sent && typeof fetch === 'function') {
      try {
        fetch(url, {method: 'POST', keepalive: true, mode: 'no-cors', credentials: 'omit'})['catch'](function () {});
        sent = true;
      } catch (e) {
        sent = false;
      }
    }
    if (!sent) {
      new Image(1, 1).src = url + (query.length ? '&' : '?') + 'format=gif';
    }
  } catch (e) {
    // a counter must never break the page that carries it
  }
})();
