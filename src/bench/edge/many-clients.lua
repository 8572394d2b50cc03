-- Beacons from many clients: each request names a random client address in X-Forwarded-For (the gateway trusts
-- 127.0.0.1 as a proxy in this run), so per-client limits are exercised the way a site's visitors exercise them:
-- 256 x (SPREAD + 1) addresses (65,536 by default), each sending a small share of the load.
local ns = os.getenv("NS") or "pageviews"
local counter = 0
request = function()
  counter = counter + 1
  local a = math.random(0, tonumber(os.getenv("SPREAD") or "255"))
  local b = math.random(0, 255)
  wrk.headers["X-Forwarded-For"] = "10.7." .. a .. "." .. b
  return wrk.format("GET", "/v1/beacon/" .. ns .. "/home")
end
