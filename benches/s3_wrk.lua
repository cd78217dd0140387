-- The S3 door's small PUT/GET rates under wrk (benches/s3.sh): each request is
-- one of the presigned V4 URLs listed in S3_URLS (path?query, one a line), so
-- both servers check a real signature and the client costs next to nothing.
-- Thread k of T takes lines k, k+T, k+2T, … in turn (no two threads write the
-- same key at once). wrk calls request() once before the run to check it, so
-- thread 0's first line is never sent: s3.sh GETs keys written after it. Env: S3_URLS, S3_METHOD (GET or PUT), S3_SIZE (PUT bytes).
local method = os.getenv("S3_METHOD") or "GET"
local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
  for _, t in ipairs(threads) do t:set("step", counter) end
end

function init(args)
  paths = {}
  local f = assert(io.open(os.getenv("S3_URLS")))
  for line in f:lines() do paths[#paths + 1] = line end
  f:close()
  body = nil
  if method == "PUT" then body = string.rep("x", tonumber(os.getenv("S3_SIZE") or "4096")) end
  i = tid
end

function request()
  local p = paths[(i % #paths) + 1]
  i = i + step
  return wrk.format(method, p, nil, body)
end

function done(summary, latency, requests)
  io.write(string.format("JSON {\"requests\":%d,\"seconds\":%.3f,\"errors\":%d,\"non2xx\":%d,\"p99_ms\":%.2f}\n",
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, latency:percentile(99) / 1000))
end
