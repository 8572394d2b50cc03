-- wrk -s post.lua: a POST with a static body and no request() or response() callback, so wrk stays on its own fast
-- path and measures the server, not its Lua (a response() callback costs wrk 10-30 % here). Statuses are taken from
-- wrk's summary ("Non-2xx or 3xx responses"), the counts from the table afterwards.
-- Environment: BODY (default {"delta":1}), CONTENT_TYPE (default application/json).
wrk.method = "POST"
wrk.body = os.getenv("BODY") or '{"delta":1}'
wrk.headers["Content-Type"] = os.getenv("CONTENT_TYPE") or "application/json"
