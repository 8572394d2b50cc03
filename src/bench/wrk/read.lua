-- wrk -s read.lua: GET the hot counter (TARGET_PATH, default /v1/counters/pageviews/hot), for the read mix (T5).
wrk.method = "GET"
wrk.path = os.getenv("TARGET_PATH") or "/v1/counters/pageviews/hot"

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

ok = 0
response = function(status, headers, body)
  if status == 200 then
    ok = ok + 1
  end
end

done = function(summary, latency, requests)
  local n = 0
  for _, thread in ipairs(threads) do
    n = n + thread:get("ok")
  end
  io.write(string.format("acknowledged %d\n", n))
end
