package io.countergateway.internal.bus;

/** Event-bus addresses of the gateway (src/DESIGN.md §5). */
public final class Addresses {
  /** JSON {@code {"type","id","delta"}}: {@code request} waits for the commit, {@code send} does not. */
  public static final String INCREMENT = "counters.increment";
  /**
   * JSON {@code {"type","id"}} or {@code {"type","ids":[…]}}; replies {@code {"type","values":{id: value}}}. On a
   * windowed namespace it also takes {@code "from"} and {@code "to"} (ISO-8601, together) or {@code "top": n} without
   * ids, and replies {@code {"type","bucket","from","to","values"}} (totals), with {@code "buckets":[{"start","value"}]}
   * for one {@code "id"}, or {@code "top":[{"id","total"}]}. On a plain namespace {@code "top": n} alone replies
   * {@code {"type","top":[{"id","total"}]}}, ranked by value.
   */
  public static final String GET = "counters.get";
  /** JSON {@code {"type","id"}}: deletes every slot of the counter. */
  public static final String RESET = "counters.reset";
  /** Header of an increment request: its idempotency key (as the HTTP {@code Idempotency-Key}). */
  public static final String IDEMPOTENCY_KEY = "idempotency-key";
  /**
   * Header of an increment request: {@code accepted} asks for the answer once the increment is taken (the HTTP 202),
   * not once it is committed; a refusal is answered as to any request.
   */
  public static final String ACK = "ack";
  /**
   * Header of a batch request: {@code each} asks for every increment to be taken and answered as if sent alone. The
   * reply is the batch's answer when every increment got it, else {@code {"refused": {"index": {"status","error",…}}}}
   * naming the increments refused; the others got the batch's answer.
   */
  public static final String ANSWER = "answer";
  /** The value of {@link #ANSWER}: every increment answered as if sent alone. */
  public static final String ANSWER_EACH = "each";
  /** Header of a reply: "true" when it repeats the answer to an earlier request with the same key. */
  public static final String IDEMPOTENT_REPLAYED = "idempotent-replayed";
  /** Empty: replies once the database answered a trivial query. */
  public static final String PING = "counters.ping";

  private Addresses() {
  }
}
