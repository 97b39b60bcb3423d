-- wrk script for bench/fleet_scale.py: a fleet of agents, each pushing on its own 10 s cadence.
-- Run with as many threads as connections (`-t N -c N`): with one connection per thread, the
-- reply wrk hands to response() is the reply to this thread's last request, so each push's
-- outcome is known per host, as a real agent knows it.
-- Arguments (after `--`): hosts file, body template, sample template, results file, thread
-- count, interval (s), jitter (s), seed, backoff base (s), backoff cap (s), most samples per push.
-- Each host has a random phase in the interval and pushes one new sample per interval (with
-- jitter); a push that gets no 2xx reply (an error status, or no reply at all) keeps its samples
-- and is retried after a full-jitter exponential backoff, carrying every unacknowledged sample,
-- as the agent's spool does (agent/nginx_fleet_agent/spool.py, backoff.py).

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } nf_timespec;
int clock_gettime(int clock_id, nf_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local timespec = ffi.new("nf_timespec")

local function now_ms()
   ffi.C.clock_gettime(CLOCK_MONOTONIC, timespec)
   return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
end

-- Upper bounds (ms) of the schedule-lag buckets: how late a push left against its due time.
local LAG_BOUNDS = {10, 50, 100, 250, 500, 1000, 2000, 5000}

local threads = {}
local thread_counter = 0

function setup(thread)
   thread:set("thread_index", thread_counter)
   thread_counter = thread_counter + 1
   table.insert(threads, thread)
end

local function read_file(path)
   local handle = assert(io.open(path, "rb"))
   local text = handle:read("*a")
   handle:close()
   return text
end

local function jitter()
   return (math.random() * 2 - 1) * jitter_ms
end

function init(args)
   results_path = args[4]
   local thread_count = tonumber(args[5])
   interval_ms = tonumber(args[6]) * 1000
   jitter_ms = tonumber(args[7]) * 1000
   math.randomseed(tonumber(args[8]) + thread_index)
   backoff_base_ms = tonumber(args[9]) * 1000
   backoff_cap_ms = tonumber(args[10]) * 1000
   max_samples = tonumber(args[11])
   body_template = read_file(args[2])
   sample_template = read_file(args[3])
   local start = now_ms()
   hosts = {}
   -- Each thread owns a disjoint share of the hosts, so seqs never collide between threads.
   local line_number = 0
   for line in io.lines(args[1]) do
      local agent_id, hostname, token, first_seq = line:match("^(%S+)\t(%S+)\t(%S+)\t(%d+)$")
      assert(agent_id, "bad hosts file line: " .. line)
      if line_number % thread_count == thread_index then
         local first_due = start + math.random() * interval_ms
         table.insert(hosts, {
            agent_id = agent_id,
            hostname = hostname,
            seq = tonumber(first_seq) - 1,
            headers = {["Authorization"] = "Bearer " .. token,
                       ["Content-Type"] = "application/json"},
            pending = {},
            next_sample_at = first_due,
            retry_at = nil,
            due = first_due,
            failures = 0,
         })
      end
      line_number = line_number + 1
   end
   assert(#hosts > 0, "thread " .. thread_index .. " got no hosts")
   sent = 0
   responses = 0
   ok = 0
   accepted = 0
   duplicates = 0
   rejected = 0
   samples_created = 0
   samples_pending = 0
   failed = 0
   no_reply = 0
   retries = 0
   max_lag_ms = 0
   lag_buckets = {}
   for i = 1, #LAG_BOUNDS + 1 do lag_buckets[i] = 0 end
   statuses = {}
   first_failure = ""
   awaiting = false
   in_flight = nil
   chosen = nil
   -- wrk calls request() once on thread 0 right after init only to check for pipelining and
   -- throws the result away; that call must not change any host or count as sent.
   verifying = thread_index == 0
end

local function earliest_host()
   local best = hosts[1]
   for i = 2, #hosts do
      if hosts[i].due < best.due then best = hosts[i] end
   end
   return best
end

local function refresh_due(host)
   if host.retry_at and host.retry_at < host.next_sample_at then
      host.due = host.retry_at
   else
      host.due = host.next_sample_at
   end
end

local function push_failed(host)
   failed = failed + 1
   host.failures = host.failures + 1
   local cap = math.min(backoff_cap_ms, backoff_base_ms * 2 ^ (host.failures - 1))
   host.retry_at = now_ms() + math.random() * cap
   refresh_due(host)
end

local function record_lag(lag)
   if lag > max_lag_ms then max_lag_ms = lag end
   for i, bound in ipairs(LAG_BOUNDS) do
      if lag <= bound then
         lag_buckets[i] = lag_buckets[i] + 1
         return
      end
   end
   lag_buckets[#LAG_BOUNDS + 1] = lag_buckets[#LAG_BOUNDS + 1] + 1
end

local function sample_text(sample)
   local values = {
      SEQ = string.format("%d", sample.seq),
      TS = sample.ts,
      ACCEPTS = string.format("%d", sample.seq * 53),
      REQUESTS = string.format("%d", sample.seq * 4100),
      RX_BYTES = string.format("%d", 10000000 + sample.seq * 2300000),
      TX_BYTES = string.format("%d", 50000000 + sample.seq * 24000000),
   }
   return (sample_template:gsub("@([%u_]+)@", values))
end

local function push_request(host, samples)
   local parts = {}
   for i, sample in ipairs(samples) do parts[i] = sample_text(sample) end
   local values = {
      AGENT_ID = host.agent_id,
      HOSTNAME = host.hostname,
      SAMPLES = table.concat(parts, ","),
   }
   local body = body_template:gsub("@([%u_]+)@", values)
   return wrk.format("POST", "/api/v1/agent/push", host.headers, body)
end

function delay()
   if chosen == nil then chosen = earliest_host() end
   local wait = chosen.due - now_ms()
   if wait <= 0 then return 0 end
   return math.floor(wait)
end

function request()
   if verifying then
      verifying = false
      local host = hosts[1]
      return push_request(host, {{seq = host.seq + 1, ts = "2026-01-01T00:00:00Z"}})
   end
   if awaiting then
      -- The previous push on this connection got no reply (wrk reconnected after an error).
      no_reply = no_reply + 1
      push_failed(in_flight)
   end
   local host = chosen or earliest_host()
   chosen = nil
   local now = now_ms()
   record_lag(math.max(0, now - host.due))
   local retrying = host.retry_at ~= nil and host.retry_at < host.next_sample_at
   if not retrying or #host.pending == 0 then
      -- The sampling tick (wrk's timer may fire a fraction of a millisecond early): a new
      -- sample joins whatever is still unacknowledged.
      host.seq = host.seq + 1
      table.insert(host.pending, {seq = host.seq, ts = os.date("!%Y-%m-%dT%H:%M:%SZ")})
      samples_created = samples_created + 1
      samples_pending = samples_pending + 1
      if #host.pending > max_samples then
         table.remove(host.pending, 1)  -- the spool is bounded: the oldest sample is lost
         samples_pending = samples_pending - 1
      end
      host.next_sample_at = host.next_sample_at + interval_ms + jitter()
   end
   if retrying or #host.pending > 1 then retries = retries + 1 end
   host.retry_at = nil
   refresh_due(host)
   sent = sent + 1
   awaiting = true
   in_flight = host
   return push_request(host, host.pending)
end

function response(status, headers, body)
   if not awaiting then return end
   awaiting = false
   responses = responses + 1
   local host = in_flight
   local key = tostring(status)
   statuses[key] = (statuses[key] or 0) + 1
   if status >= 200 and status < 300 then
      ok = ok + 1
      accepted = accepted + tonumber(body:match('"accepted"%s*:%s*(%d+)') or "0")
      duplicates = duplicates + tonumber(body:match('"duplicates"%s*:%s*(%d+)') or "0")
      -- Each refused sample is one object with a "field" key in the `rejected` list.
      local refused = body:match('"rejected"%s*:%s*(%[.-%])%s*,%s*"gaps"')
      if refused then
         local _, count = refused:gsub('"field"%s*:', "")
         rejected = rejected + count
      end
      samples_pending = samples_pending - #host.pending
      host.pending = {}
      host.failures = 0
   else
      if first_failure == "" then first_failure = key .. " " .. body:sub(1, 300) end
      push_failed(host)
   end
end

local function json_string(text)
   return '"' .. text:gsub('[%c"\\]', function(c)
      return string.format("\\u%04x", c:byte())
   end) .. '"'
end

function done(summary, latency, requests)
   local parts = {}
   for _, thread in ipairs(threads) do
      local status_parts = {}
      for code, count in pairs(thread:get("statuses")) do
         table.insert(status_parts, string.format('"%s":%d', code, count))
      end
      local lag_parts = {}
      for i, count in ipairs(thread:get("lag_buckets")) do lag_parts[i] = tostring(count) end
      table.insert(parts, string.format(
         '{"sent":%d,"responses":%d,"ok":%d,"accepted":%d,"duplicates":%d,"rejected":%d,'
            .. '"samples_created":%d,"samples_pending":%d,"failed":%d,"no_reply":%d,'
            .. '"retries":%d,"in_flight":%d,"max_lag_ms":%f,"lag_buckets":[%s],'
            .. '"statuses":{%s},"first_failure":%s}',
         thread:get("sent"), thread:get("responses"), thread:get("ok"), thread:get("accepted"),
         thread:get("duplicates"), thread:get("rejected"), thread:get("samples_created"),
         thread:get("samples_pending"), thread:get("failed"), thread:get("no_reply"),
         thread:get("retries"), thread:get("awaiting") and 1 or 0, thread:get("max_lag_ms"),
         table.concat(lag_parts, ","), table.concat(status_parts, ","),
         json_string(thread:get("first_failure"))))
   end
   local bounds = {}
   for i, bound in ipairs(LAG_BOUNDS) do bounds[i] = tostring(bound) end
   local errors = summary.errors
   -- done() runs in the main Lua state, which never saw init's arguments.
   local out = assert(io.open(threads[1]:get("results_path"), "w"))
   out:write(string.format(
      '{"duration_us":%d,"requests":%d,"errors":{"connect":%d,"read":%d,"write":%d,'
         .. '"status":%d,"timeout":%d},"latency_us":{"mean":%f,"p50":%d,"p90":%d,"p95":%d,'
         .. '"p99":%d,"max":%d},"lag_bounds_ms":[%s],"threads":[%s]}\n',
      summary.duration, summary.requests, errors.connect, errors.read, errors.write,
      errors.status, errors.timeout, latency.mean, latency:percentile(50),
      latency:percentile(90), latency:percentile(95), latency:percentile(99), latency.max,
      table.concat(bounds, ","), table.concat(parts, ",")))
   out:close()
end
