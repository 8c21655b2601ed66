-- wrk script: every request picks a random user from the whole dataset (and a random service where
-- the scenario needs one). Arguments after `--`: scenario api_key api_token ids_file services_file
-- [pool_size]. The ids file has one 32-character MD5 per line (33 bytes a line), read once into one
-- string per thread and indexed by offset, so 1 M users cost 33 MB rather than a million Lua strings.
--
-- The requests are built in init(), before wrk starts its clock, into a pool (100,000 by default,
-- each a fresh random draw from the whole dataset) that request() walks through. Building each
-- request in request() instead made wrk's latency record wrong: in rounds against nginx serving a
-- static file, the recorded latencies added up to 1.3-1.6 times the time the 64 connections had
-- (a closed loop's mean latency cannot exceed connections / requests per second), with a p99 of
-- 18-34 ms, while the same rounds with the pool gave 1.00-1.01 and 1.7-2.1 ms (docs/performance.md,
-- "The load generator's own tail"). At the rates measured here a 5-s round uses fewer requests than
-- the pool holds, except service_details, whose requests name no user.
local scenario, api_key, api_token, ids, n_users, services
local pool, pool_size, next_request = {}, 0, 0
local form = { ["Content-Type"] = "application/x-www-form-urlencoded" }

local function user()
  local i = math.random(0, n_users - 1)
  return string.sub(ids, i * 33 + 1, i * 33 + 32)
end

local function service()
  return services[math.random(1, #services)]
end

local function build()
  if scenario == "return_services_public" then
    return wrk.format("GET", "/api/return_services/" .. api_key .. "/" .. user() .. "/public")
  elseif scenario == "return_services_private" then
    return wrk.format("POST", "/api/return_services/" .. api_key .. "/" .. user(), form, "api_token=" .. api_token)
  elseif scenario == "service_details_all" then
    return wrk.format("GET", "/api/service_details/" .. api_key)
  elseif scenario == "service_details_one" then
    return wrk.format("GET", "/api/service_details/" .. api_key .. "/" .. service())
  elseif scenario == "update_service" then
    return wrk.format("POST", "/api/update_service/" .. api_key .. "/" .. user() .. "/" .. service() .. "/b" .. math.random(1, 1000000000), form, "api_token=" .. api_token)
  end
  error("unknown scenario " .. tostring(scenario))
end

function init(args)
  scenario, api_key, api_token = args[1], args[2], args[3]
  local f = assert(io.open(args[4], "rb"))
  ids = f:read("*a")
  f:close()
  n_users = math.floor(#ids / 33)
  services = {}
  for line in io.lines(args[5]) do
    if #line > 0 then services[#services + 1] = line end
  end
  -- Different threads must not replay the same sequence.
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16) % 100000)
  pool_size = tonumber(args[6] or "100000")
  for i = 1, pool_size do pool[i] = build() end
  -- The 33 MB of identifiers are not needed once the pool is built.
  ids = nil
  collectgarbage()
end

function request()
  next_request = next_request % pool_size + 1
  return pool[next_request]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"non_2xx":%d,"socket_errors":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
