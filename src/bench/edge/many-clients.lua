-- Beacons from many clients: each request names a random client address in X-Forwarded-For (the gateway trusts
-- 127.0.0.1 as a proxy in this run), so per-client and per-network limits are exercised the way a site's visitors
-- exercise them: addresses of 10.0.0.0/8, (SPREAD + 1) x 65,536 of them in (SPREAD + 1) x 256 /24s (SPREAD 255, the
-- default: 16,777,216 addresses in 65,536 /24s), each sending a small share of the load. PAGES > 1: each request
-- views one of the pages /p1 … /pPAGES at random (a site's pages), else /home.
local ns = os.getenv("NS") or "pageviews"
local spread = tonumber(os.getenv("SPREAD") or "255")
local pages = tonumber(os.getenv("PAGES") or "1")
request = function()
  wrk.headers["X-Forwarded-For"] = "10." .. math.random(0, spread) .. "." .. math.random(0, 255) .. "." .. math.random(0, 255)
  local page = pages > 1 and ("p" .. math.random(1, pages)) or "home"
  return wrk.format("GET", "/v1/beacon/" .. ns .. "/" .. page)
end
