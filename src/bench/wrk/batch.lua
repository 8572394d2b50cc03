-- wrk -s batch.lua: POST /v1/increments with BATCH (default 100) increments of delta 1 per request, spread over
-- COUNTERS (default 1000) counters "b-<n>" of namespace TYPE (default downloads). Bodies are built once per thread
-- (BODIES of them, default 64) and sent in turn, so wrk spends its time sending, not building JSON.
-- done() prints "acknowledged N" (requests answered EXPECT, default 200) and "increments N" (N x BATCH).
local batch = tonumber(os.getenv("BATCH") or "100")
local counters = tonumber(os.getenv("COUNTERS") or "1000")
local kind = os.getenv("TYPE") or "downloads"
local bodies_count = tonumber(os.getenv("BODIES") or "64")
local path = os.getenv("TARGET_PATH") or "/v1/increments"
local expect = tonumber(os.getenv("EXPECT") or "200")
local headers = { ["Content-Type"] = "application/json" }

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

ok = 0
statuses = {}
local bodies = {}
local next_body = 1

init = function(args)
  math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16) % 100000)
  for b = 1, bodies_count do
    local items = {}
    for i = 1, batch do
      items[i] = string.format('{"type":"%s","id":"b-%d","delta":1}', kind, math.random(counters))
    end
    bodies[b] = "[" .. table.concat(items, ",") .. "]"
  end
end

request = function()
  local body = bodies[next_body]
  next_body = next_body % bodies_count + 1
  return wrk.format("POST", path, headers, body)
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
  io.write(string.format("increments %d\n", acknowledged * batch))
  for status, count in pairs(all) do
    io.write(string.format("status %d: %d\n", status, count))
  end
end
