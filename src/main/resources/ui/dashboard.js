// The dashboard: plain JavaScript over the gateway's public JSON API, no build step. Every value that comes from a
// counter id is put on the page as text (textContent), never as HTML: ids are chosen by whoever sends beacons.
//
// A windowed namespace that takes beacons is shown as a site: the headline (views, visitors, views per visitor, the
// change against the previous range of the same length), a chart of the site's views and visitors, its pages (search,
// paging), and its sources, campaigns, browsers, operating systems and devices, read from the namespace's companion
// namespaces (docs/api.md "Companion namespaces"). Another windowed namespace is a top list of counters and a chart; a
// plain one its top counters by value above a look-up. Times are shown in the viewer's time zone (day buckets by their UTC date, as they are counted).
//
// Every view has an address, kept in the page's URL so that it can be shared and reloaded:
//   /ui/?ns=pageviews&range=24h&id=%2Fhome      a windowed namespace over a range, and one page's chart
//   /ui/?ns=pageviews&range=7d&q=docs&page=2    its pages matching "docs", the second page of them
//   /ui/?ns=pageviews&range=custom&from=…&to=…  the same over a custom range (ISO-8601, UTC)
//   /ui/?ns=likes&id=a&id=b                     a plain namespace's look-up of those ids
// Without ns, the page opens the first site (else the first windowed namespace, else the first namespace).
'use strict';

(() => {
  const BUCKET_SECONDS = { minute: 60, hour: 3600, day: 86400 };
  /** The preset ranges, by their name in the address. */
  const RANGES = { '1h': 3600, '24h': 86400, '7d': 7 * 86400, '30d': 30 * 86400 };
  const DEFAULT_RANGE = '24h';
  /** The namespaces and the gateway's health (answered from memory: cheap). */
  const POLL_MS = 2000;
  /** The shown view: its lists and charts (each a database read). */
  const VIEW_REFRESH_MS = 5000;
  /** Rows of a page of the pages list. */
  const PAGE_ROWS = 20;
  /** The pages read for search and paging (limits.maxReadIds allows 1,000 by default; 100 if it was lowered). */
  const PAGES_READ = [1000, 100];
  /** Rows of each breakdown table (sources, campaigns, browsers, systems, devices). */
  const BREAKDOWN_ROWS = 50;
  /** Rows of a plain namespace's top list (the API's ?top=N, ranked by value). */
  const PLAIN_TOP_ROWS = 20;
  const BREAKDOWNS = ['sources', 'campaigns', 'browsers', 'os', 'devices'];
  /** The least room between two labels of the time axis, in CSS pixels. */
  const LABEL_SPACE = 90;
  const ZONE = (Intl.DateTimeFormat().resolvedOptions().timeZone) || 'UTC';
  const numbers = new Intl.NumberFormat('en-US');
  const oneDecimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1, minimumFractionDigits: 1 });
  // sv-SE writes dates as ISO-8601 does (2026-11-29 14:05), whatever the browser's language
  const localTime = new Intl.DateTimeFormat('sv-SE', { timeZone: ZONE, year: 'numeric', month: '2-digit',
    day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const state = {
    token: null, namespaces: [], gateway: null, previous: null, chart: null, chartKey: null, siteChart: null,
    siteChartKey: null, xLabels: [],
    // the view: what the address says
    view: { ns: null, range: DEFAULT_RANGE, from: null, to: null, ids: [], q: '', page: 1 },
    // the range the shown lists and charts were read for
    range: null,
    // the pages (or counters) of the range, as read: searched and paged here
    pages: [],
    // what each table's CSV holds: {name, header, rows}
    tables: {},
    // bumped by every change of view: an answer for an older view is dropped
    generation: 0,
  };
  const $ = id => document.getElementById(id);

  /** A number with thousands separators; '–' for none. */
  const count = n => (n === null || n === undefined) ? '–' : numbers.format(n);
  /** An instant as ISO-8601 in UTC, to the second. */
  const iso = date => date.toISOString().replace(/\.\d{3}Z$/, 'Z');
  /** An instant (epoch seconds) in the viewer's time zone, to the minute; a day bucket by its UTC date. */
  const when = (t, bucket) => t === null || t === undefined ? '–'
    : bucket === 'day' ? iso(new Date(t * 1000)).slice(0, 10) : localTime.format(new Date(t * 1000));

  class NeedsToken extends Error {}

  class ApiError extends Error {
    constructor(body, status) {
      super(body.message || ('HTTP ' + status));
      this.code = body.error;
    }
  }

  /** GET a JSON answer of the API, with the token when one was given; a 401 or 403 asks for one. */
  async function api(path) {
    const headers = state.token ? { Authorization: 'Bearer ' + state.token } : {};
    const response = await fetch(path, { headers, cache: 'no-store' });
    if (response.status === 401 || response.status === 403) {
      askForToken(response.status === 403 ? 'this token does not carry the read right' : '');
      throw new NeedsToken();
    }
    const body = await response.json();
    if (!response.ok) {
      throw new ApiError(body, response.status);
    }
    return body;
  }

  function askForToken(problem) {
    $('token-dialog').hidden = false;
    $('token-button').hidden = false;
    $('token-error').textContent = problem;
    $('token-input').focus();
  }

  function cell(text, className) {
    const td = document.createElement('td');
    td.textContent = text;
    if (className) {
      td.className = className;
    }
    return td;
  }

  const DURATION_WORDS = seconds => seconds % 86400 === 0 ? seconds / 86400 + (seconds === 86400 ? ' day' : ' days')
    : seconds / 3600 + (seconds === 3600 ? ' hour' : ' hours');
  const BUCKET_WORDS = { minute: 'per minute', hour: 'per hour', day: 'per day' };

  /** A namespace in words: a site (its page views) or counters, how finely it is kept and for how long. */
  function kind(namespace) {
    const parts = [isSite(namespace) ? 'site' : 'counters'];
    if (namespace.window) {
      parts.push(BUCKET_WORDS[namespace.window.bucket] + ', kept ' + DURATION_WORDS(namespace.window.retentionSeconds));
    }
    if (namespace.unique) {
      parts.push('visitors');
    }
    if (namespace.public && !namespace.window) {
      parts.push('page views');
    }
    return parts.join(' · ');
  }

  const namespaceNamed = name => state.namespaces.find(n => n.name === name);
  /** A windowed namespace that takes beacons: its companions break its views down. */
  const isSite = namespace => !!(namespace && namespace.window && namespace.public && namespace.companions);

  // ---- what became of a public namespace's page views ----

  /** Why views were counted under a reserved id instead of their page's. */
  const FOLDED = {
    invalid_id: 'page addresses that cannot be stored as sent, counted under (invalid)',
    client_new_ids: 'new pages from one visitor address past its budget of new pages per hour, counted under (other)',
    network_new_ids: 'new pages from one network past its budget of new pages per hour, counted under (other)',
    namespace_new_ids: 'new pages past the namespace\'s budget of new pages per hour, counted under (other)',
  };
  /** Why views were not counted at all. */
  const DROPPED = {
    rate_limited: 'one client repeating views faster than its rate: not counted, so that nobody can inflate a page',
    crawler: 'crawlers and bots (ua-parser\'s list)',
    headless_browser: 'headless or automated browsers (Puppeteer, Playwright, Selenium…)',
    configured_pattern: 'user agents matching beacon.botPatterns',
    no_user_agent: 'requests without a User-Agent (every browser sends one)',
    long_user_agent: 'User-Agents over 512 characters (no browser sends one)',
    costly_user_agent: 'User-Agents made up to cost the bot filter (no browser\'s needs that many rules)',
    do_not_track: 'visitors asking not to be tracked (DNT: 1), as configured',
    global_privacy_control: 'visitors sending Global Privacy Control (Sec-GPC: 1), as configured',
  };

  function reasonItem(n, label, words) {
    const item = document.createElement('li');
    item.dataset.reason = label;
    item.textContent = count(n) + ' ' + (words || label);
    return item;
  }

  /** The selected public namespace's views since start: counted, folded and dropped by reason, and what to do. */
  function showBeacons(namespace, gateway) {
    const beacons = namespace && namespace.beacons;
    $('beacons').hidden = !beacons;
    if (!beacons) {
      return;
    }
    const folded = Object.values(beacons.folded).reduce((a, b) => a + b, 0);
    const dropped = Object.values(beacons.dropped).reduce((a, b) => a + b, 0);
    $('beacons-counted').textContent = count(beacons.counted) + ' views counted'
      + (folded > 0 ? ', ' + count(folded) + ' of them under a reserved id' : '')
      + (dropped > 0 ? '; ' + count(dropped) + ' not counted' : '; none left out');
    const items = [];
    Object.entries(beacons.folded).forEach(([label, n]) => items.push(reasonItem(n, 'folded_' + label, FOLDED[label])));
    Object.entries(beacons.dropped).forEach(([label, n]) => items.push(reasonItem(n, label, DROPPED[label])));
    $('beacons-reasons').replaceChildren(...items);
    const hints = [];
    const limited = beacons.dropped.rate_limited || 0;
    if (limited > 0 && beacons.rateLimitedFromOneClient >= limited / 2) {
      hints.push(count(limited) + ' rate_limited, at least ' + count(beacons.rateLimitedFromOneClient)
        + ' of them from one address: behind a proxy or load balancer? Set http.trustedProxies to its address, so that '
        + 'each visitor is told apart by X-Forwarded-For.');
    }
    (gateway.untrustedForwarders || []).forEach(peer => hints.push(count(peer.requests) + ' views arrived through '
      + peer.peer + ' with X-Forwarded-For naming ' + (peer.forwardedClients >= 20 ? '20 or more' : count(peer.forwardedClients))
      + ' visitors, but it is not in http.trustedProxies: they all count as one visitor address. If it is your proxy, '
      + 'add it there.'));
    $('beacons-hints').textContent = hints.join(' ');
  }


  // ---- the view and its address ----

  /** The view an address names. */
  function viewOf(search) {
    const query = new URLSearchParams(search);
    const range = query.get('range');
    const page = parseInt(query.get('page') || '1', 10);
    return {
      ns: query.get('ns'),
      range: range === 'custom' || RANGES[range] ? range : DEFAULT_RANGE,
      from: query.get('from'),
      to: query.get('to'),
      ids: query.getAll('id').filter(id => id.length > 0),
      q: query.get('q') || '',
      page: page > 0 ? page : 1,
    };
  }

  /** The address of a view: only what the view needs, in a fixed order. */
  function addressOf(view) {
    const query = new URLSearchParams();
    query.set('ns', view.ns);
    const namespace = namespaceNamed(view.ns);
    if (namespace && namespace.window) {
      query.set('range', view.range);
      if (view.range === 'custom') {
        query.set('from', view.from);
        query.set('to', view.to);
      }
      if (view.q) {
        query.set('q', view.q);
      }
      if (view.page > 1) {
        query.set('page', String(view.page));
      }
    }
    view.ids.forEach(id => query.append('id', id));
    return location.pathname + '?' + query.toString();
  }

  /** Shows {@code view}; {@code how}: 'push' a new address (a reader's step), 'replace' it, or leave it. */
  function go(view, how) {
    state.view = { q: '', page: 1, ...view };
    state.generation++;
    const address = addressOf(state.view);
    if (how === 'push' && address !== location.pathname + location.search) {
      history.pushState(null, '', address);
    } else if (how === 'replace') {
      history.replaceState(null, '', address);
    }
    showView();
  }

  /** A namespace named by the address if declared, else the first site, else the first windowed one, else the first. */
  function landingNamespace(name) {
    if (name && namespaceNamed(name)) {
      return name;
    }
    const site = state.namespaces.find(isSite);
    const windowed = state.namespaces.find(n => n.window);
    return (site || windowed || state.namespaces[0] || {}).name || null;
  }

  // ---- the gateway and its namespaces, refreshed every POLL_MS ----

  async function refresh() {
    try {
      const overview = await api('/v1/namespaces');
      showHealth(overview.gateway);
      state.gateway = overview.gateway;
      const first = state.namespaces.length === 0;
      showNamespaces(overview.namespaces, Date.now());
      showBeacons(namespaceNamed(state.view.ns), overview.gateway);
      if (first) {
        // the first answer tells which namespaces there are: open the one the address names, or the landing one
        const view = viewOf(location.search);
        const ns = landingNamespace(view.ns);
        if (ns) {
          go({ ...view, ns, ids: ns === view.ns ? view.ids : [] }, 'replace');
        }
      }
    } catch (e) {
      if (!(e instanceof NeedsToken)) {
        $('health').textContent = 'unreachable';
        $('health').className = 'badge not-ready';
      }
    }
  }

  function showHealth(gateway) {
    const problems = [];
    if (gateway.draining) {
      problems.push('shutting down');
    }
    if (gateway.failingWriters > 0) {
      problems.push(gateway.failingWriters + ' writers failing');
    }
    if (gateway.sheddingWriters > 0) {
      problems.push(gateway.sheddingWriters + ' writers shedding');
    }
    const backlog = gateway.journalBytes > 0 && gateway.journalOldestAgeSeconds >= 5
      ? ' · journal holds ' + count(gateway.journalBytes) + ' bytes, oldest ' + count(Math.round(gateway.journalOldestAgeSeconds)) + ' s'
      : '';
    $('health').textContent = (gateway.ready ? 'ready' : 'not ready: ' + problems.join(', ')) + backlog;
    $('health').className = 'badge ' + (gateway.ready ? 'ready' : 'not-ready');
  }

  function showNamespaces(namespaces, now) {
    const before = state.previous;
    state.previous = { at: now, taken: Object.fromEntries(namespaces.map(n => [n.name, n.values])) };
    state.namespaces = namespaces;
    const body = $('namespaces').tBodies[0];
    body.replaceChildren(...namespaces.map(namespace => {
      const row = document.createElement('tr');
      row.dataset.namespace = namespace.name;
      const rate = before && before.taken[namespace.name] !== undefined
        ? Math.max(0, Math.round((namespace.values - before.taken[namespace.name]) * 1000 / (now - before.at)))
        : null;
      const link = document.createElement('a');
      link.textContent = namespace.name;
      link.href = addressOf({ ns: namespace.name, range: state.view.range, from: state.view.from, to: state.view.to,
        ids: [], q: '', page: 1 });
      link.addEventListener('click', event => {
        event.preventDefault();
        select(namespace.name);
      });
      const name = cell('', 'name');
      name.append(link);
      row.append(name, cell(kind(namespace), 'kind'), cell(count(rate), 'num rate'), cell(count(namespace.values), 'num values'));
      row.classList.toggle('selected', state.view.ns === namespace.name);
      row.addEventListener('click', () => select(namespace.name));
      return row;
    }));
  }

  // ---- one namespace ----

  function select(name) {
    if (name !== state.view.ns) {
      go({ ...state.view, ns: name, ids: [], q: '', page: 1 }, 'push');
    }
  }

  /** Shows the view of the address: the namespace's heading, then its site view, its top list, or its look-up. */
  function showView() {
    const namespace = namespaceNamed(state.view.ns);
    if (!namespace) {
      return;
    }
    document.querySelectorAll('#namespaces tbody tr').forEach(row =>
      row.classList.toggle('selected', row.dataset.namespace === namespace.name));
    const site = isSite(namespace);
    $('detail').hidden = false;
    $('detail-title').textContent = namespace.name + ' (' + kind(namespace) + ')';
    $('detail-error').textContent = '';
    $('range-form').hidden = !namespace.window;
    $('range-label').hidden = !namespace.window;
    $('windowed').hidden = !namespace.window;
    $('site').hidden = !site;
    $('breakdowns').hidden = !site;
    showBeacons(namespace, state.gateway || {});
    $('plain').hidden = !!namespace.window;
    document.querySelectorAll('.unique-col, .visitors-only').forEach(element => { element.hidden = !namespace.unique; });
    $('top-title').textContent = site ? 'Pages' : 'Counters';
    $('top-id-head').textContent = site ? 'page' : 'counter';
    $('top-total-head').textContent = site ? 'views' : 'total';
    if (namespace.window) {
      $('range').value = state.view.range;
      $('custom').hidden = state.view.range !== 'custom';
      if (state.view.range === 'custom') {
        $('from').value = localInput(state.view.from);
        $('to').value = localInput(state.view.to);
      }
      $('page-search').value = state.view.q;
      showWindowed();
    } else {
      $('ids').value = state.view.ids.join(', ');
      showPlainTop();
      lookUp();
    }
  }

  /** An ISO instant as a datetime-local input's value, in the viewer's time zone. */
  function localInput(instant) {
    const date = new Date(instant || '');
    return isNaN(date) ? '' : localTime.format(date).replace(' ', 'T');
  }

  /** The view's range as [from, to): a preset up to now, or the custom one; within the retention. */
  function range(namespace) {
    const now = new Date();
    let from;
    let to = now;
    if (state.view.range === 'custom' && state.view.from && state.view.to) {
      from = new Date(state.view.from);
      to = new Date(state.view.to);
    } else {
      from = new Date(now.getTime() - (RANGES[state.view.range] || RANGES[DEFAULT_RANGE]) * 1000);
    }
    const oldest = new Date(now.getTime() - namespace.window.retentionSeconds * 1000);
    if (from < oldest) {
      from = oldest;
    }
    // the range before it, of the same length, when the namespace still keeps it
    const length = to.getTime() - from.getTime();
    const previousFrom = new Date(from.getTime() - length);
    const previous = previousFrom >= oldest && length > 0 ? { from: iso(previousFrom), to: iso(from) } : null;
    return { from: iso(from), to: iso(to), previous };
  }

  const rangeQuery = r => 'from=' + encodeURIComponent(r.from) + '&to=' + encodeURIComponent(r.to);
  const counterPath = (namespace, id) => '/v1/counters/' + encodeURIComponent(namespace)
    + (id === undefined ? '' : '/' + encodeURIComponent(id));

  /** Everything a windowed namespace shows over the view's range, read again on every refresh. */
  async function showWindowed() {
    const generation = state.generation;
    const namespace = namespaceNamed(state.view.ns);
    const r = range(namespace);
    const reads = [showTop(namespace, r, generation)];
    if (isSite(namespace)) {
      reads.push(showSite(namespace, r, generation));
      BREAKDOWNS.forEach(dimension => reads.push(showBreakdown(namespace, dimension, r, generation)));
    }
    $('range-label').textContent = when(Date.parse(r.from) / 1000) + ' to ' + when(Date.parse(r.to) / 1000)
      + ' (your time zone, ' + ZONE + '), refreshed every ' + VIEW_REFRESH_MS / 1000 + ' s';
    const failures = (await Promise.allSettled(reads)).filter(result => result.status === 'rejected')
      .map(result => result.reason).filter(e => !(e instanceof NeedsToken));
    if (generation === state.generation) {
      $('detail-error').textContent = failures.length > 0 ? failures[0].message : '';
    }
  }

  // ---- the site: headline and chart ----

  /** The change from {@code before} to {@code now} in words: +12 %, −3 %, new, or nothing to compare. */
  function change(now, before) {
    if (before === null || before === undefined || now === null || now === undefined) {
      return '';
    }
    if (before === 0) {
      return now === 0 ? '±0 %' : 'new';
    }
    const percent = Math.round((now - before) * 100 / before);
    return (percent > 0 ? '+' : percent < 0 ? '−' : '±') + Math.abs(percent) + ' %';
  }

  function showChange(id, now, before) {
    const text = change(now, before);
    $(id).textContent = text;
    $(id).className = 'change' + (text.startsWith('+') || text === 'new' ? ' up' : text.startsWith('−') ? ' down' : '');
  }

  /** The site's views and visitors over the range and the one before, and its chart (per minute for the last hour). */
  async function showSite(namespace, r, generation) {
    const unique = namespace.unique ? '&unique=true' : '';
    const site = counterPath(namespace.companions.site, 'total');
    const perMinute = state.view.range === '1h' && namespace.companions.minutes;
    const current = await api(site + '?' + rangeQuery(r) + unique);
    const previous = r.previous ? await api(site + '?' + rangeQuery(r.previous) + unique) : null;
    const minutes = perMinute ? await api(counterPath(namespace.companions.minutes, 'total') + '?' + rangeQuery(r)) : null;
    const before = perMinute && r.previous
      ? await api(counterPath(namespace.companions.minutes, 'total') + '?' + rangeQuery(r.previous)) : null;
    if (generation !== state.generation) {
      return;
    }
    const views = minutes ? minutes.total : current.total;
    const previousViews = minutes ? (before ? before.total : null) : (previous ? previous.total : null);
    $('views').textContent = count(views);
    $('views').dataset.value = String(views);
    showChange('views-change', views, previousViews);
    if (namespace.unique) {
      $('visitors').textContent = count(current.unique);
      $('visitors').dataset.value = String(current.unique);
      showChange('visitors-change', current.unique, previous ? previous.unique : null);
      $('per-visitor').textContent = current.unique > 0 ? oneDecimal.format(current.total / current.unique) : '–';
    }
    $('previous-label').textContent = r.previous ? 'change against ' + when(Date.parse(r.previous.from) / 1000)
      + ' to ' + when(Date.parse(r.previous.to) / 1000) : 'no earlier range of the same length is kept';
    const shown = minutes || current;
    const bucket = minutes ? 'minute' : namespace.window.bucket;
    state.siteChart = drawChart({
      element: $('site-chart'), chart: state.siteChart, key: [namespace.name, r.from, bucket, namespace.unique].join('|'),
      bucket, answer: shown, visitors: !minutes && namespace.unique, label: 'views',
    });
    state.siteChartKey = state.siteChart.key;
    window.dashboard.siteChart = state.siteChart;
  }

  // ---- tables: pages (search, paging) and breakdowns, each exported as CSV ----

  /** A breakdown of the site's views: its top values over the range, with their share of the views. */
  async function showBreakdown(namespace, dimension, r, generation) {
    const answer = await api(counterPath(namespace.companions[dimension]) + '?top=' + BREAKDOWN_ROWS + '&'
      + rangeQuery(r));
    if (generation !== state.generation) {
      return;
    }
    const sum = answer.top.reduce((a, entry) => a + entry.total, 0);
    const table = $(dimension);
    table.tBodies[0].replaceChildren(...answer.top.map(entry => {
      const row = document.createElement('tr');
      row.dataset.id = entry.id;
      row.append(cell(entry.id, 'id'), cell(count(entry.total), 'num total'),
        cell(sum > 0 ? Math.round(entry.total * 100 / sum) + ' %' : '–', 'num share'));
      return row;
    }));
    if (answer.top.length === 0) {
      const row = document.createElement('tr');
      row.className = 'empty';
      const empty = cell('none in this range', 'muted');
      empty.colSpan = 3;
      row.append(empty);
      table.tBodies[0].append(row);
    }
    table.dataset.loaded = 'true';
    state.tables[dimension] = { name: dimension, header: [table.tHead.rows[0].cells[0].textContent, 'views'],
      rows: answer.top.map(entry => [entry.id, entry.total]) };
  }

  /** The namespace's top pages (or counters) over the range: read once, searched and paged here. */
  async function showTop(namespace, r, generation) {
    const unique = namespace.unique ? '&unique=true' : '';
    let answer = null;
    for (const top of PAGES_READ) {
      try {
        answer = await api(counterPath(namespace.name) + '?top=' + top + '&' + rangeQuery(r) + unique);
        break;
      } catch (e) {
        if (!(e instanceof ApiError) || e.code !== 'invalid_top' || top === PAGES_READ[PAGES_READ.length - 1]) {
          throw e;
        }
      }
    }
    if (generation !== state.generation) {
      return;
    }
    state.range = r;
    state.pages = answer.top;
    const table = $('top');
    table.dataset.from = r.from;
    table.dataset.to = r.to;
    showPages(namespace);
    table.dataset.loaded = 'true';
    table.dataset.refreshed = String(Date.now());
    // the chart of the page the address names, else of the first in the list
    const id = state.view.ids[0] || (answer.top.length > 0 ? answer.top[0].id : null);
    if (id !== null) {
      await showChart(namespace, id, generation);
    }
  }

  /** The page of the pages list the view names, among those matching its search. */
  function showPages(namespace) {
    const search = state.view.q.toLowerCase();
    const matching = search ? state.pages.filter(entry => entry.id.toLowerCase().includes(search)) : state.pages;
    const pages = Math.max(1, Math.ceil(matching.length / PAGE_ROWS));
    const page = Math.min(state.view.page, pages);
    const shown = matching.slice((page - 1) * PAGE_ROWS, page * PAGE_ROWS);
    const table = $('top');
    let visitorsPending = false;
    table.tBodies[0].replaceChildren(...shown.map(entry => {
      const row = document.createElement('tr');
      row.dataset.id = entry.id;
      row.append(cell(entry.id, 'id'), cell(count(entry.total), 'num total'));
      if (namespace.unique) {
        // views without a visitor yet: the visitors are merged apart from the counts, a moment later
        const none = entry.total > 0 && entry.unique === 0;
        visitorsPending = visitorsPending || none;
        row.append(cell(none ? '0 *' : count(entry.unique), 'num unique'));
      }
      row.addEventListener('click', () => go({ ...state.view, ids: [entry.id] }, 'push'));
      return row;
    }));
    table.dataset.matching = String(matching.length);
    $('page-label').textContent = matching.length === 0 ? (search ? 'nothing matches' : 'none in this range')
      : count((page - 1) * PAGE_ROWS + 1) + '–' + count((page - 1) * PAGE_ROWS + shown.length) + ' of '
        + count(matching.length) + (state.pages.length >= PAGES_READ[0] ? ' (the top ' + count(state.pages.length) + ')' : '');
    $('page-prev').disabled = page <= 1;
    $('page-next').disabled = page >= pages;
    $('pager').dataset.page = String(page);
    showUniqueNote(namespace, visitorsPending);
    const site = isSite(namespace);
    state.tables.top = { name: site ? 'pages' : 'counters', header: namespace.unique
      ? [site ? 'page' : 'counter', site ? 'views' : 'total', 'visitors'] : [site ? 'page' : 'counter', site ? 'views' : 'total'],
      rows: matching.map(entry => namespace.unique ? [entry.id, entry.total, entry.unique] : [entry.id, entry.total]) };
  }

  /** Why a page with views may show 0 visitors: the merge a moment after the count, or visitors left out (and why). */
  function showUniqueNote(namespace, visitorsPending) {
    const leftOut = (state.gateway && state.gateway.uniquesLeftOut) || {};
    const reasons = Object.entries(leftOut).map(([reason, n]) => count(n) + ' ' + ({
      full: 'while the gateway held as many pages\' visitors as its memory allows',
      no_salt: 'while the database could not give the day\'s salt',
    }[reason] || reason));
    const note = $('unique-note');
    note.hidden = !namespace.unique || (!visitorsPending && reasons.length === 0);
    note.textContent = (visitorsPending ? '* Views without a visitor: visitors come from page-view beacons only, not '
      + 'from views counted through the API, and are merged a moment after their views (every '
      + 'uniques.flushInterval), so a page seen in the last seconds may show none yet. ' : '')
      + (reasons.length > 0 ? 'Counted views left out of the visitor counts since start: ' + reasons.join('; ') + '.' : '');
  }

  /** A table's loaded rows as a CSV file: quoted where needed, and never read as a formula by a spreadsheet. */
  function exportCsv(table) {
    const data = state.tables[table];
    if (!data) {
      return;
    }
    const field = value => {
      let text = String(value);
      if (/^[=+\-@\t\r]/.test(text)) {
        text = '\'' + text;
      }
      return /[",\n\r]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
    };
    const lines = [data.header, ...data.rows].map(row => row.map(field).join(','));
    const blob = new Blob([lines.join('\r\n') + '\r\n'], { type: 'text/csv;charset=utf-8' });
    const link = document.createElement('a');
    const r = state.range || {};
    link.href = URL.createObjectURL(blob);
    link.download = [state.view.ns, data.name, (r.from || '').replace(/:/g, ''), (r.to || '').replace(/:/g, '')]
      .filter(part => part).join('_') + '.csv';
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
    window.dashboard.lastCsv = lines.join('\n');
  }

  // ---- charts ----

  /** Tick positions of the time axis: bucket starts, every {@code stride}-th one, so that labels never crowd. */
  function bucketSplits(step, start, end, width) {
    const buckets = Math.max(1, Math.round((end - start) / step));
    const room = Math.max(1, Math.floor(width / LABEL_SPACE));
    const stride = Math.ceil(buckets / room);
    const splits = [];
    for (let t = start; t < end; t += step * stride) {
      splits.push(t);
    }
    return splits;
  }

  /**
   * A chart of a range read's buckets as bars (every bucket, empty ones at 0), visitors as a line; drawn again only
   * when what it shows changed, else given the new numbers (the reader's cursor and size kept).
   */
  function drawChart({ element, chart, key, bucket, answer, visitors, label, onLabels }) {
    const step = BUCKET_SECONDS[bucket];
    const start = Date.parse(answer.from) / 1000;
    const end = Date.parse(answer.to) / 1000;
    const byStart = new Map(answer.buckets.map(b => [Date.parse(b.start) / 1000, b]));
    const times = [];
    const values = [];
    const uniques = [];
    for (let t = start; t < end; t += step) {
      const found = byStart.get(t);
      times.push(t);
      values.push(found ? found.value : 0);
      uniques.push(found && found.unique !== undefined ? found.unique : 0);
    }
    const data = visitors ? [times, values, uniques] : [times, values];
    if (chart && chart.key === key && chart.data[0].length === times.length) {
      chart.setData(data);
      return chart;
    }
    const series = [{ label: bucket === 'day' ? 'day (UTC)' : 'time', value: (u, t) => when(t, bucket) },
      { label, stroke: '#2f6fde', fill: '#2f6fde55', width: 1, paths: uPlot.paths.bars({ size: [0.7, 60] }),
        points: { show: false }, value: (u, v) => count(v) }];
    if (visitors) {
      series.push({ label: 'visitors', stroke: '#d9822b', width: 2, value: (u, v) => count(v) });
    }
    if (chart) {
      chart.destroy();
    }
    const options = {
      width: element.clientWidth || 320,
      height: 240,
      series,
      axes: [{
        space: LABEL_SPACE, size: 60,
        // one label per bucket start (every few when they are many): a day bucket is one date, never repeated
        splits: u => bucketSplits(step, start, end, u.width),
        values: (u, ticks) => {
          const labels = ticks.map(t => when(t, bucket));
          if (onLabels) {
            onLabels(labels);
          }
          return labels.map(text => text.replace(' ', '\n'));
        },
      }, { size: 70, values: (u, ticks) => ticks.map(count) }],
      // a bar per bucket: the scale reaches half a bucket beyond the first and the last, and never below zero
      scales: {
        x: { time: true, range: () => [times[0] - step / 2, times[times.length - 1] + step / 2] },
        y: { range: (u, min, max) => [0, Math.max(1, max) * 1.1] },
      },
    };
    const drawn = new uPlot(options, data, element);
    drawn.key = key;
    return drawn;
  }

  /** One page's (or counter's) buckets over the range, visitors as a line. */
  async function showChart(namespace, id, generation) {
    document.querySelectorAll('#top tbody tr').forEach(row => row.classList.toggle('selected', row.dataset.id === id));
    const r = state.range;
    const answer = await api(counterPath(namespace.name, id) + '?' + rangeQuery(r)
      + (namespace.unique ? '&unique=true' : ''));
    if (generation !== state.generation) {
      return;
    }
    const site = isSite(namespace);
    $('chart-title').textContent = id + ': ' + count(answer.total) + (site ? ' views' : '') + ' over the range'
      + (namespace.unique ? ', ' + count(answer.unique) + ' visitors' : '');
    state.chart = drawChart({
      element: $('chart'), chart: state.chart, key: [namespace.name, id, r.from, namespace.window.bucket, namespace.unique].join('|'),
      bucket: namespace.window.bucket, answer, visitors: namespace.unique, label: site ? 'views' : 'total',
      onLabels: labels => { state.xLabels = labels; },
    });
    state.chartKey = state.chart.key;
    window.dashboard.chart = state.chart;
  }

  /** A plain namespace's counters with the largest values, read again on every refresh. */
  async function showPlainTop() {
    const generation = state.generation;
    try {
      const answer = await api(counterPath(state.view.ns) + '?top=' + PLAIN_TOP_ROWS);
      if (generation !== state.generation) {
        return;
      }
      const table = $('plain-top');
      table.tBodies[0].replaceChildren(...answer.top.map(entry => {
        const row = document.createElement('tr');
        row.dataset.id = entry.id;
        row.append(cell(entry.id, 'id'), cell(count(entry.total), 'num value'));
        return row;
      }));
      table.dataset.loaded = 'true';
      table.dataset.refreshed = String(Date.now());
    } catch (e) {
      if (!(e instanceof NeedsToken) && generation === state.generation) {
        $('detail-error').textContent = e.message;
      }
    }
  }

  async function lookUp() {
    const generation = state.generation;
    const ids = state.view.ids;
    $('values').tBodies[0].replaceChildren();
    if (ids.length === 0) {
      return;
    }
    const query = ids.map(id => 'id=' + encodeURIComponent(id)).join('&');
    try {
      const answer = await api(counterPath(state.view.ns) + '?' + query);
      if (generation !== state.generation) {
        return;
      }
      $('detail-error').textContent = '';
      $('values').tBodies[0].replaceChildren(...answer.counters.map(counter => {
        const row = document.createElement('tr');
        row.dataset.id = counter.id;
        row.append(cell(counter.id, 'id'), cell(count(counter.value), 'num value'));
        return row;
      }));
    } catch (e) {
      if (!(e instanceof NeedsToken) && generation === state.generation) {
        $('detail-error').textContent = e.message;
      }
    }
  }

  /** The shown view read again, a preset range sliding with the clock. */
  function refreshView() {
    const namespace = namespaceNamed(state.view.ns);
    if (!namespace || document.hidden) {
      return;
    }
    if (namespace.window) {
      showWindowed();
    } else {
      showPlainTop();
      if (state.view.ids.length > 0) {
        lookUp();
      }
    }
  }

  // ---- wiring ----

  $('token-dialog').addEventListener('submit', event => {
    event.preventDefault();
    state.token = $('token-input').value.trim() || null;
    $('token-dialog').hidden = true;
    refresh();
  });
  $('token-button').addEventListener('click', () => askForToken(''));
  $('range').addEventListener('change', () => {
    $('custom').hidden = $('range').value !== 'custom';
    if ($('range').value !== 'custom') {
      go({ ...state.view, range: $('range').value, from: null, to: null, page: 1 }, 'push');
    }
  });
  $('range-form').addEventListener('submit', event => {
    event.preventDefault();
    // the inputs are in the viewer's time zone
    const from = new Date($('from').value);
    const to = new Date($('to').value);
    if (isNaN(from) || isNaN(to)) {
      $('detail-error').textContent = 'give both ends of the range';
      return;
    }
    go({ ...state.view, range: 'custom', from: iso(from), to: iso(to), page: 1 }, 'push');
  });
  $('page-search').addEventListener('input', () => {
    // each keystroke replaces the address (Back leaves the search, not each letter); the list is searched here
    state.view = { ...state.view, q: $('page-search').value.trim(), page: 1 };
    history.replaceState(null, '', addressOf(state.view));
    const namespace = namespaceNamed(state.view.ns);
    if (namespace) {
      showPages(namespace);
    }
  });
  const turn = by => {
    const namespace = namespaceNamed(state.view.ns);
    state.view = { ...state.view, page: Math.max(1, parseInt($('pager').dataset.page || '1', 10) + by) };
    history.pushState(null, '', addressOf(state.view));
    if (namespace) {
      showPages(namespace);
    }
  };
  $('page-prev').addEventListener('click', () => turn(-1));
  $('page-next').addEventListener('click', () => turn(1));
  document.querySelectorAll('button.csv').forEach(button =>
    button.addEventListener('click', () => exportCsv(button.dataset.table)));
  $('lookup').addEventListener('submit', event => {
    event.preventDefault();
    const ids = $('ids').value.split(',').map(id => id.trim()).filter(id => id.length > 0);
    go({ ...state.view, ids }, 'push');
  });
  window.addEventListener('popstate', () => {
    const view = viewOf(location.search);
    go({ ...view, ns: landingNamespace(view.ns) }, 'none');
  });
  window.addEventListener('resize', () => {
    [state.chart, state.siteChart].forEach(chart => {
      if (chart) {
        chart.setSize({ width: chart.root.parentElement.clientWidth || 320, height: 240 });
      }
    });
  });

  window.dashboard = { state, select, refresh, go, exportCsv };
  refresh();
  setInterval(refresh, POLL_MS);
  setInterval(refreshView, VIEW_REFRESH_MS);
})();
