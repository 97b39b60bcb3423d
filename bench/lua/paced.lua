-- wrk script for bench/agent_cost.py: steady background traffic for nginx, one request per
-- connection every `delay_ms` (first argument after `--`), so nginx's counters and logs move.
function init(args)
   delay_ms = tonumber(args[1])
end

function delay()
   return delay_ms
end
