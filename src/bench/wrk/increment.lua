-- wrk -s increment.lua: one increment per request (POST, body {"delta":1}) on one hot counter by default.
-- Environment: COUNTERS=N spreads requests over N counters; TARGET_PATH (default /v1/counters/pageviews/hot);
-- ACK=accepted asks for 202 instead of waiting for the commit; EXPECT (default 200) is the status that counts as
-- acknowledged; IDEMPOTENCY_KEYS=1 sends a unique Idempotency-Key with every request. done() prints
-- "acknowledged N" and "status S: N" lines, summed over all wrk threads.
wrk.method = "POST"
wrk.body = '{"delta":1}'
wrk.headers["Content-Type"] = "application/json"
local counters = tonumber(os.getenv("COUNTERS") or "1")
local base = os.getenv("TARGET_PATH") or "/v1/counters/pageviews/hot"
local query = os.getenv("ACK") and ("?ack=" .. os.getenv("ACK")) or ""
local expect = tonumber(os.getenv("EXPECT") or "200")
local keyed = os.getenv("IDEMPOTENCY_KEYS") == "1"
local keyPrefix = tostring(os.time()) .. "-" .. tostring(math.random(1000000000))
local sent = 0

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

ok = 0
statuses = {}

request = function()
  local path = base
  if counters > 1 then
    path = base .. "-" .. math.random(counters)
  end
  if keyed then
    sent = sent + 1
    return wrk.format(nil, path .. "/increments" .. query, {["Idempotency-Key"] = keyPrefix .. "-" .. sent})
  end
  return wrk.format(nil, path .. "/increments" .. query)
end

response = function(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == expect then
    ok = ok + 1
  end
end

done = function(summary, latency, requests)
  local acknowledged = 0
  local all = {}
  for _, thread in ipairs(threads) do
    acknowledged = acknowledged + thread:get("ok")
    for status, count in pairs(thread:get("statuses")) do
      all[status] = (all[status] or 0) + count
    end
  end
  io.write(string.format("acknowledged %d\n", acknowledged))
  for status, count in pairs(all) do
    io.write(string.format("status %d: %d\n", status, count))
  end
end
