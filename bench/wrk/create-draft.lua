-- wrk script: each request creates one draft in its own group with its own Idempotency-Key.
-- Usage: wrk -s bench/wrk/create-draft.lua -H "Authorization: Bearer <key>" <origin>/v1/workspaces/<ws>/posts
local counter = 0
local threads = 0

-- `prefix` is a global each thread gets from setup (a local would hide it): unique per thread and run.
function setup(thread)
  threads = threads + 1
  thread:set("prefix", tostring(os.time()) .. "-" .. threads)
end

function request()
  counter = counter + 1
  local id = prefix .. "-" .. counter
  local body = '{"group":"bench-' .. id .. '","when":"draft","posts":[{"channel":"mastodon","body":["draft ' .. id .. '"]}]}'
  -- Headers given here replace wrk's -H ones, so those are copied in.
  local headers = { ["Content-Type"] = "application/json", ["Idempotency-Key"] = "bench-" .. id }
  for name, value in pairs(wrk.headers) do headers[name] = value end
  return wrk.format("POST", nil, headers, body)
end

local errors = 0
function response(status, headers, body)
  if status ~= 201 and errors == 0 then io.stderr:write(status .. " " .. body .. "\n") end
  if status ~= 201 then errors = errors + 1 end
end
