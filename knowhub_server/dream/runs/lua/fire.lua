-- Fires one slot of a schedule once: claims the slot, creates the run, indexes it and
-- enqueues it, unless another replica claimed the slot first or the schedule was deleted
-- meanwhile.
--
-- KEYS: the schedules, the slot's claim, the run, the run stream, the slots fired, the
-- runs by time, the requester's runs (store.py: FireCall.keys).
-- ARGV: the schedule id, the run id, the claim's lifetime (seconds), the slot fired (JSON),
-- the run's fields (a JSON list: field, value, ...), its created_at (store.py:
-- FireCall.args).
-- Returns 1 when this call fired the slot, else 0.

local SCHEDULES, SLOT, RUN, RUNS, FIRED, BY_TIME, BY_REQUESTER = unpack(KEYS)
local schedule_id, run_id, slot_ttl, fired, run_fields, created_at = unpack(ARGV)

if redis.call('HEXISTS', SCHEDULES, schedule_id) == 0 then return 0 end
if not redis.call('SET', SLOT, run_id, 'NX', 'EX', slot_ttl) then return 0 end
redis.call('HSET', RUN, unpack(cjson.decode(run_fields)))
redis.call('XADD', RUNS, '*', 'run_id', run_id, 'attempt', '0')
redis.call('HSET', FIRED, schedule_id, fired)
redis.call('ZADD', BY_TIME, created_at, run_id)
redis.call('ZADD', BY_REQUESTER, created_at, run_id)
return 1
