-- wrk -s increment.lua: one increment per request (POST, body {"delta":1}) on one hot counter by default.
-- Set COUNTERS=N in the environment to spread requests over N counters.
wrk.method = "POST"
wrk.body = '{"delta":1}'
wrk.headers["Content-Type"] = "application/json"
local counters = tonumber(os.getenv("COUNTERS") or "1")
local base = os.getenv("TARGET_PATH") or "/v1/counters/pageviews/hot"

request = function()
  local path = base
  if counters > 1 then
    path = base .. "-" .. math.random(counters)
  end
  return wrk.format(nil, path .. "/increments" .. (os.getenv("ACK") and ("?ack=" .. os.getenv("ACK")) or ""))
end

local statuses = {}
response = function(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

done = function(summary, latency, requests)
  for status, count in pairs(statuses) do
    io.write(string.format("status %d: %d\n", status, count))
  end
end
