-- wrk script: replays a pool of requests drawn beforehand (bench/requests.ts), one after another on
-- every connection. Argument after `--`: the pool file, one request a line, METHOD, path and form
-- body separated by tabs.
--
-- The requests are formatted in init(), before wrk starts its clock. Building each request in
-- request() made wrk's latency record wrong (recorded latencies adding up to more time than the
-- connections had), and the draws belong to one seeded place shared with the open-loop generator.
local pool, pool_size, next_request = {}, 0, 0
local form = { ["Content-Type"] = "application/x-www-form-urlencoded" }

function init(args)
  for line in io.lines(args[1]) do
    local method, path, body = line:match("^(%u+)\t([^\t]+)\t(.*)$")
    if method then
      pool_size = pool_size + 1
      if body ~= "" then
        pool[pool_size] = wrk.format(method, path, form, body)
      else
        pool[pool_size] = wrk.format(method, path)
      end
    end
  end
  assert(pool_size > 0, "empty request pool " .. tostring(args[1]))
end

function request()
  next_request = next_request % pool_size + 1
  return pool[next_request]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"non_2xx":%d,"socket_errors":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.status, e.connect + e.read + e.write + e.timeout))
end
