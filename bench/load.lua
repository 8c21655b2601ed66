-- wrk script: every request picks a random user from the whole dataset (and a random service where
-- the scenario needs one). Arguments after `--`: scenario api_key api_token ids_file services_file.
-- The ids file has one 32-character MD5 per line (33 bytes a line), read once into one string per
-- thread and indexed by offset, so 1 M users cost 33 MB rather than a million Lua strings.

local scenario, api_key, api_token, ids, n_users, services
local form = { ["Content-Type"] = "application/x-www-form-urlencoded" }

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
end

local function user()
  local i = math.random(0, n_users - 1)
  return string.sub(ids, i * 33 + 1, i * 33 + 32)
end

local function service()
  return services[math.random(1, #services)]
end

function request()
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

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"non_2xx":%d,"socket_errors":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
