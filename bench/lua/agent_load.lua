-- wrk script for bench/ingest.py: every request is one agent call of a host taken in turn
-- from the enrolled hosts, so load spreads over the fleet like many agents at 10 s would.
-- Arguments (after `--`): mode (push|ping), hosts file, body template file, base epoch,
-- results file, thread count.
-- push: one realistic sample per request, with the host's next seq and growing counters.
-- ping: the authenticated no-op endpoint, same rotation, the baseline.

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

function init(args)
   mode = args[1]
   base_epoch = tonumber(args[4])
   results_path = args[5]
   local thread_count = tonumber(args[6])
   template = read_file(args[3])
   hosts = {}
   -- Each thread owns a disjoint share of the hosts, so seqs never collide between threads.
   local line_number = 0
   for line in io.lines(args[2]) do
      local agent_id, hostname, token, first_seq = line:match("^(%S+)\t(%S+)\t(%S+)\t(%d+)$")
      assert(agent_id, "bad hosts file line: " .. line)
      if line_number % thread_count == thread_index then
         table.insert(hosts, {
            agent_id = agent_id,
            hostname = hostname,
            seq = tonumber(first_seq) - 1,
            headers = {["Authorization"] = "Bearer " .. token,
                       ["Content-Type"] = "application/json"},
         })
      end
      line_number = line_number + 1
   end
   assert(#hosts > 0, "thread " .. thread_index .. " got no hosts")
   next_host = 1
   sent = 0
   responses = 0
   ok = 0
   accepted = 0
   duplicates = 0
   statuses = {}
   first_failure = ""
   -- wrk calls request() once on thread 0 right after init only to check for pipelining and
   -- throws the result away; that call must not use up a seq or count as sent.
   verifying = thread_index == 0
end

function request()
   local host = hosts[next_host]
   local seq = host.seq + 1
   if verifying then
      verifying = false
   else
      next_host = next_host % #hosts + 1
      sent = sent + 1
      host.seq = seq
   end
   if mode == "ping" then
      return wrk.format("POST", "/api/v1/agent/ping", host.headers, "")
   end
   local values = {
      AGENT_ID = host.agent_id,
      HOSTNAME = host.hostname,
      SEQ = string.format("%d", seq),
      -- One sample every 10 s of agent time, starting hours in the past, never in the future.
      TS = os.date("!%Y-%m-%dT%H:%M:%SZ", base_epoch + seq * 10),
      ACCEPTS = string.format("%d", seq * 53),
      REQUESTS = string.format("%d", seq * 4100),
      RX_BYTES = string.format("%d", 10000000 + seq * 2300000),
      TX_BYTES = string.format("%d", 50000000 + seq * 24000000),
   }
   local body = template:gsub("@([%u_]+)@", values)
   return wrk.format("POST", "/api/v1/agent/push", host.headers, body)
end

function response(status, headers, body)
   responses = responses + 1
   local key = tostring(status)
   statuses[key] = (statuses[key] or 0) + 1
   if status >= 200 and status < 300 then
      ok = ok + 1
      if mode == "push" then
         accepted = accepted + tonumber(body:match('"accepted"%s*:%s*(%d+)') or "0")
         duplicates = duplicates + tonumber(body:match('"duplicates"%s*:%s*(%d+)') or "0")
      end
   elseif first_failure == "" then
      first_failure = key .. " " .. body:sub(1, 300)
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
      table.insert(parts, string.format(
         '{"sent":%d,"responses":%d,"ok":%d,"accepted":%d,"duplicates":%d,'
            .. '"statuses":{%s},"first_failure":%s}',
         thread:get("sent"), thread:get("responses"), thread:get("ok"),
         thread:get("accepted"), thread:get("duplicates"),
         table.concat(status_parts, ","), json_string(thread:get("first_failure"))))
   end
   local errors = summary.errors
   -- done() runs in the main Lua state, which never saw init's arguments.
   local out = assert(io.open(threads[1]:get("results_path"), "w"))
   out:write(string.format(
      '{"duration_us":%d,"requests":%d,"errors":{"connect":%d,"read":%d,"write":%d,'
         .. '"status":%d,"timeout":%d},"latency_us":{"mean":%f,"p50":%d,"p90":%d,"p99":%d,'
         .. '"max":%d},"threads":[%s]}\n',
      summary.duration, summary.requests, errors.connect, errors.read, errors.write,
      errors.status, errors.timeout, latency.mean, latency:percentile(50),
      latency:percentile(90), latency:percentile(99), latency.max, table.concat(parts, ",")))
   out:close()
end
