package io.countergateway.internal.http;

import io.countergateway.internal.beacon.BeaconFilter;
import io.countergateway.internal.beacon.BeaconVerdict;
import io.countergateway.internal.beacon.FoldReason;
import io.countergateway.internal.beacon.PageVisit;
import io.countergateway.internal.beacon.ReservedIds;
import io.countergateway.internal.beacon.VisitDimensions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.TrustedProxies;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.model.IncrementBatch;
import io.countergateway.internal.model.IncrementRules;
import io.countergateway.internal.uniques.UniqueVisitors;
import io.countergateway.internal.write.AckMode;
import io.countergateway.internal.write.IdempotentIncrements;
import io.countergateway.internal.write.WriteAnswer;
import io.countergateway.internal.write.WritePath;
import io.countergateway.internal.write.WriteRequest;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.function.Supplier;

/**
 * The write routes (single increment, batch, beacon) as a door: each turns its request into a {@link WriteRequest},
 * and the {@link WriteAnswer} the write path decides into status, headers and body. They run on the ingest verticle's
 * event loop.
 */
final class IncrementRoutes {
  static final String BEACON_PREFIX = "/v1/beacon/";
  /**
   * Names why a beacon answered like a counted one was not counted (a {@code gateway_beacons_dropped_total} reason,
   * or {@code head}): what a developer testing the snippet in a headless browser needs to see.
   */
  static final String DROPPED_HEADER = "X-Counter-Dropped";
  private static final CharSequence DROPPED = HttpHeaders.createOptimized(DROPPED_HEADER);
  /** Names why a counted beacon was counted under a reserved id of its namespace (a {@code FoldReason} label). */
  static final String FOLDED_HEADER = "X-Counter-Folded";
  private static final CharSequence FOLDED = HttpHeaders.createOptimized(FOLDED_HEADER);
  private static final CharSequence IGNORED = HttpHeaders.createOptimized(BeaconQuery.IGNORED_HEADER);
  /** The smallest transparent GIF (42 bytes), for beacons embedded as images. */
  static final Buffer PIXEL = Buffer.buffer(Base64.getDecoder().decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"));
  private static final CharSequence CACHE_CONTROL = HttpHeaders.createOptimized("Cache-Control");
  private static final CharSequence NO_STORE = HttpHeaders.createOptimized("no-store");

  private final WritePath writes;
  private final BeaconFilter beaconFilter;
  /** Null when no namespace counts unique visitors. */
  private final UniqueVisitors uniques;
  private final TrustedProxies trustedProxies;
  private final ForwardedPeers forwardedPeers;
  private final IncrementRules rules;
  private final int maxBatchIncrements;
  private final BodyReader bodies;
  private final long maxBodyBytes;
  private final long maxBeaconBodyBytes;
  /** What a view of a windowed namespace adds to its companions, on this event loop. */
  private final VisitDimensions dimensions;

  IncrementRoutes(GatewayConfig config, IncrementRules rules, WritePath writes, BeaconFilter beaconFilter,
                  UniqueVisitors uniques, BodyReader bodies, ForwardedPeers forwardedPeers) {
    this.writes = writes;
    this.beaconFilter = beaconFilter;
    this.uniques = uniques;
    this.trustedProxies = config.getHttp().getTrustedProxies();
    this.forwardedPeers = forwardedPeers;
    this.rules = rules;
    this.maxBatchIncrements = config.getLimits().getMaxBatchIncrements();
    this.bodies = bodies;
    this.maxBodyBytes = config.getLimits().getMaxBodyBytes();
    this.maxBeaconBodyBytes = config.getBeacon().getMaxBodyBytes();
    this.dimensions = new VisitDimensions(config.getLimits().getMaxIdLength(), rules.clock());
  }

  /**
   * {@code POST /v1/counters/{type}/{id}/increments}, body {@code {"delta": n}} or empty for 1. Runs after the
   * authorization check; what the headers alone refuse is answered before a byte of the body is read.
   */
  void single(RoutingContext ctx) {
    // the query is decoded now, in the router's chain: a malformed one is refused as the router refuses it (400)
    ctx.queryParams();
    bodies.read(ctx.request(), maxBodyBytes, true, body -> single(ctx, body));
  }

  private void single(RoutingContext ctx, Buffer bodyBytes) {
    Increment increment;
    AckMode ack;
    WriteRequest request;
    try {
      ack = AckQuery.of(ctx);
      // add-and-get: ?return=value; the query is only decoded when there is one (the hot path has none)
      boolean returnsValue = ctx.request().query() != null
        && rules.returnsValue(singleQueryValue(ctx, "return"), ack == AckMode.COMMIT);
      JsonObject body = singleBody(bodyBytes);
      increment = rules.increment(ctx.pathParam("type"), ctx.pathParam("id"),
        body == null ? null : body.getValue("delta"), body == null ? null : body.getValue("at"));
      String idempotencyKey = IdempotentIncrements.key(ctx.request().getHeader(IdempotentIncrements.HEADER),
        IdempotentIncrements.HEADER);
      request = WriteRequest.of(increment, ack).returningValue(returnsValue)
        .withIdempotencyKey(idempotencyKey, idempotencyKey == null ? null : incrementAnswer(increment, ack));
    } catch (ApiError e) {
      Responses.error(ctx, e);
      return;
    }
    submit(request, ctx.response(), () -> incrementAnswer(increment, ack));
  }

  /**
   * The hot path's single increment: {@code body} (may be empty) already read within the body limit, no query but
   * the ack, no idempotency key, no form data. Refusals are answered here, as the router path answers them.
   */
  void single(String type, String id, AckMode ack, Buffer body, HttpServerResponse response) {
    Increment increment;
    try {
      JsonObject fields = singleBody(body);
      increment = rules.increment(type, id, fields == null ? null : fields.getValue("delta"),
        fields == null ? null : fields.getValue("at"));
    } catch (ApiError e) {
      Responses.error(response, e);
      return;
    }
    submit(WriteRequest.of(increment, ack), response, () -> incrementAnswer(increment, ack));
  }

  /** {@code POST /v1/increments}: a JSON array or NDJSON of {@code {"type","id","delta"}}; all validated first. */
  void batch(RoutingContext ctx) {
    ctx.queryParams();
    bodies.read(ctx.request(), maxBodyBytes, true, body -> batch(ctx, body));
  }

  private void batch(RoutingContext ctx, Buffer body) {
    IncrementBatch batch;
    AckMode ack;
    WriteRequest request;
    try {
      ack = AckQuery.of(ctx);
      batch = BatchParser.parse(body, rules, maxBatchIncrements);
      String idempotencyKey = IdempotentIncrements.key(ctx.request().getHeader(IdempotentIncrements.HEADER),
        IdempotentIncrements.HEADER);
      request = WriteRequest.of(batch.perCounter(), ack)
        .withIdempotencyKey(idempotencyKey, idempotencyKey == null ? null : batchAnswer(batch, ack));
    } catch (ApiError e) {
      Responses.error(ctx, e);
      return;
    }
    submit(request, ctx.response(), () -> batchAnswer(batch, ack));
  }

  /** {@code successBody}: what this route answers a success with, unless the answer carries a stored body. */
  private void submit(WriteRequest request, HttpServerResponse response, Supplier<String> successBody) {
    writes.submit(request).onSuccess(answer -> answer(response, request, answer, successBody));
  }

  /**
   * A refusal as its JSON error; a success as the stored body of a request with an idempotency key (the first
   * request's, marked {@code Idempotent-Replayed: true} on a repeat) or this route's own, with add-and-get's value.
   */
  private static void answer(HttpServerResponse response, WriteRequest request, WriteAnswer answer,
                             Supplier<String> successBody) {
    if (answer.isRefused()) {
      Responses.error(response, answer.refusal());
      return;
    }
    if (answer.replayed()) {
      response.putHeader("Idempotent-Replayed", "true");
    }
    String body = answer.storedBody() != null ? answer.storedBody() : successBody.get();
    if (request.returnsValue() && answer.status() == 200) {
      body = new JsonObject(body).put("value", answer.value()).encode();
    }
    Responses.json(response, answer.status(), body);
  }

  private static String singleQueryValue(RoutingContext ctx, String name) {
    List<String> values = ctx.queryParam(name);
    if (values.size() > 1) {
      throw ApiError.badRequest("invalid_" + name, name, name + " may be given once");
    }
    return values.isEmpty() ? null : values.get(0);
  }

  /** {@code {"type","id","delta","ack"}}, written directly: this answer is on the hottest path. */
  private static String incrementAnswer(Increment increment, AckMode ack) {
    StringBuilder json = new StringBuilder(96).append("{\"type\":");
    quote(json, increment.key().type()).append(",\"id\":");
    quote(json, increment.key().id()).append(",\"delta\":").append(increment.delta())
      .append(",\"ack\":\"").append(ack.label).append("\"}");
    return json.toString();
  }

  private static StringBuilder quote(StringBuilder json, String text) {
    json.append('"');
    JsonStringEncoder.getInstance().quoteAsString(text, json);
    return json.append('"');
  }

  private static String batchAnswer(IncrementBatch batch, AckMode ack) {
    return new JsonObject().put("increments", batch.increments())
      .put("counters", batch.perCounter().size()).put("delta", batch.totalDelta()).put("ack", ack.label).encode();
  }

  /**
   * {@code GET|POST /v1/beacon/{type}/{id}}: public namespaces only, delta 1, answered once taken. The id is the
   * page's path, decoded once ({@link PathSegments}); one that cannot be a page id is counted under the namespace's
   * {@code (invalid)} id ({@link #beaconId}). A body (any type, up to beacon.maxBodyBytes) is read and ignored, and so
   * is every query parameter but {@code format} ({@link BeaconQuery}). A beacon the namespace's filters drop gets the
   * same status, with {@code X-Counter-Dropped} naming why. A counted beacon of a {@code unique: true} namespace also
   * joins its counter-bucket's sketch of distinct visitors.
   */
  void beacon(RoutingContext ctx) {
    NamespaceOptions namespace;
    BeaconId id;
    try {
      namespace = beaconNamespace(ctx.pathParam("type"), Boolean.TRUE.equals(ctx.get(BearerAuth.BEACON_AUTHORIZED)));
      // the id as sent (the router's normalised path only decodes letters, digits and -._~), decoded here once
      id = beaconId(namespace, idSegment(ctx.normalizedPath()));
    } catch (ApiError e) {
      if (ctx.request().isEnded()) {
        Responses.error(ctx, e);
      } else {
        bodies.refuse(ctx.request(), e);
      }
      return;
    }
    if (HttpApi.isHead(ctx)) {
      // what the GET would answer, and nothing counted
      answerBeacon(ctx.request(), "head", null, BeaconQuery.of(ctx.request().query()));
      return;
    }
    // a POST's body is read and dropped (never held), within beacon.maxBodyBytes and the body deadline
    bodies.read(ctx.request(), maxBeaconBodyBytes, false, body -> takeBeacon(namespace, id.increment(), id.folded(),
      BeaconQuery.of(ctx.request().query()), ctx.request()));
  }

  /** The id segment of {@code /v1/beacon/{type}/{id}[/]}, still percent-encoded. */
  private static String idSegment(String path) {
    int idStart = path.indexOf('/', BEACON_PREFIX.length()) + 1;
    int idEnd = path.indexOf('/', idStart);
    return idEnd < 0 ? path.substring(idStart) : path.substring(idStart, idEnd);
  }

  /**
   * The namespace of a beacon: declared and public (or not public, with a token carrying the {@code beacon} right:
   * {@code authorized}), else the error to answer ({@link IncrementRules#beaconNamespace}).
   */
  NamespaceOptions beaconNamespace(String type, boolean authorized) {
    return rules.beaconNamespace(type, authorized);
  }

  /**
   * A beacon's increment from its id segment as sent ({@code rawId}, percent-encoded): the page id it names
   * ({@link IncrementRules#pageId}), or, when it cannot be one, the namespace's {@code (invalid)} id, folded: the
   * view is counted and the reason reported, never dropped.
   */
  BeaconId beaconId(NamespaceOptions namespace, String rawId) {
    String id = rules.pageId(namespace, PathSegments.decode(rawId));
    return id == null ? new BeaconId(rules.beacon(namespace, ReservedIds.INVALID), FoldReason.INVALID_ID)
      : new BeaconId(rules.beacon(namespace, id), null);
  }

  /** A beacon's increment, and why its id is a reserved one ({@code folded}, null when it is the page's own). */
  record BeaconId(Increment increment, FoldReason folded) {
  }

  /**
   * A valid beacon, from the router or the hot path: filtered, counted unless dropped, answered either way.
   * {@code folded}: why its id is already a reserved one of the namespace, or null; {@code visit}: where the view came
   * from, as its script said. A counted view of a windowed namespace is taken together with what it adds to the
   * namespace's companions ({@link VisitDimensions}), in one request: journaled and answered as one, so the
   * breakdowns never disagree with the views they break down.
   */
  void takeBeacon(NamespaceOptions namespace, Increment increment, FoldReason folded, BeaconQuery query,
                  HttpServerRequest request) {
    takeBeacon(namespace, increment, folded, query.visit(), request,
      (answered, dropped, reason) -> answerBeacon(answered, dropped, reason, query));
  }

  /**
   * How a door answers a beacon once it is counted or dropped: {@code dropped} names why it was not counted (null when
   * it was), {@code folded} why it was counted under a reserved id (null when under its own). A refusal of the write
   * path is answered as its JSON error by every door alike.
   */
  interface BeaconAnswer {
    void answer(HttpServerRequest request, String dropped, FoldReason folded);
  }

  /**
   * As {@link #takeBeacon(NamespaceOptions, Increment, FoldReason, BeaconQuery, HttpServerRequest)}, answered in the
   * door's own protocol ({@code answer}): the tracker endpoints answer what their scripts expect.
   */
  void takeBeacon(NamespaceOptions namespace, Increment increment, FoldReason folded, PageVisit visit,
                  HttpServerRequest request, BeaconAnswer answer) {
    String client = ClientAddress.of(request, trustedProxies);
    ClientAddress.untrustedForwarder(request, trustedProxies, forwardedPeers);
    BeaconVerdict verdict = beaconFilter.check(namespace, request.headers(), client, increment, folded);
    if (!verdict.isCounted()) {
      // dropped: the same status, not counted
      answer.answer(request, verdict.dropped().label, null);
      return;
    }
    Increment view = verdict.increment();
    WriteRequest write = namespace.isWindowed()
      ? WriteRequest.of(withCompanions(namespace, view, visit, request), AckMode.ACCEPTED)
      : WriteRequest.of(view, AckMode.ACCEPTED);
    writes.submit(write).onSuccess(taken -> answerTaken(namespace, verdict, request, client, taken, answer));
  }

  private List<Increment> withCompanions(NamespaceOptions namespace, Increment view, PageVisit visit,
                                         HttpServerRequest request) {
    List<Increment> increments = new ArrayList<>(7);
    increments.add(view);
    increments.addAll(dimensions.increments(namespace, view, visit, pageHost(request),
      request.getHeader(HttpHeaders.USER_AGENT)));
    return increments;
  }

  /**
   * The host of the page that sent a beacon: its {@code Origin}, else its {@code Referer} (the page's address, or its
   * origin under the default referrer policy); null when neither names one.
   */
  static String pageHost(HttpServerRequest request) {
    String page = request.getHeader(HttpHeaders.ORIGIN);
    if (page == null || page.equals("null")) {
      page = request.getHeader(HttpHeaders.REFERER);
    }
    if (page == null) {
      return null;
    }
    try {
      return new URI(page).getHost();
    } catch (URISyntaxException e) {
      return null;
    }
  }

  private void answerTaken(NamespaceOptions namespace, BeaconVerdict verdict, HttpServerRequest request, String client,
                           WriteAnswer answer, BeaconAnswer door) {
    if (answer.isRefused()) {
      Responses.error(request.response(), answer.refusal());
      return;
    }
    beaconFilter.counted(namespace, verdict);
    if (uniques != null && namespace.isUnique()) {
      String userAgent = request.getHeader("User-Agent");
      // the site's distinct visitors beside the page's: a visitor of two pages is one visitor of the site
      CounterKey page = verdict.increment().key();
      uniques.record(page, VisitDimensions.siteKey(namespace, page.bucket()), client, userAgent);
    }
    door.answer(request, null, verdict.folded());
  }

  /**
   * {@code dropped}: why the beacon was not counted, null when it was; {@code folded}: why it was counted under a
   * reserved id, null when under its own; {@code query}: the beacon's query, read once by its door.
   */
  private static void answerBeacon(HttpServerRequest request, String dropped, FoldReason folded, BeaconQuery query) {
    HttpServerResponse response = request.response();
    if (response.ended() || response.closed()) {
      return;
    }
    response.putHeader(CACHE_CONTROL, NO_STORE);
    if (dropped != null) {
      response.putHeader(DROPPED, dropped);
    }
    if (folded != null) {
      response.putHeader(FOLDED, folded.label);
    }
    if (query.ignored() != null) {
      response.putHeader(IGNORED, query.ignored());
    }
    if (query.gif()) {
      response.setStatusCode(200).putHeader("Content-Type", "image/gif").end(PIXEL);
    } else {
      response.setStatusCode(204).end();
    }
  }

  /** The body of a single increment, {@code {"delta": n, "at": "…"}} (both optional); null when empty. */
  private static JsonObject singleBody(Buffer body) {
    if (body == null || body.length() == 0) {
      return null;
    }
    JsonObject json;
    try {
      json = JsonBodies.object(body);
    } catch (DecodeException e) {
      throw ApiError.badRequest("invalid_json", "body", "the body must be a JSON object like {\"delta\": 1}");
    }
    for (String field : json.fieldNames()) {
      if (!field.equals("delta") && !field.equals("at")) {
        throw ApiError.badRequest("unknown_field", field.length() > 64 ? field.substring(0, 64) : field,
          "only 'delta' and 'at' may be given in the body");
      }
    }
    if (json.containsKey("delta") && json.getValue("delta") == null) {
      throw ApiError.badRequest("invalid_delta", "delta", "delta must be a whole number");
    }
    if (json.containsKey("at") && json.getValue("at") == null) {
      throw ApiError.badRequest("invalid_at", "at", "at must be an ISO-8601 date-time with an offset");
    }
    return json;
  }
}
