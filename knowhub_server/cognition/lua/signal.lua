-- Publishes one evaluation trigger for a trace's pending queries, unless this pending set
-- was published already (and no evaluator gave up on it since).
--
-- KEYS: the trace record, its pending queries, the trigger stream, its abandoned queries.
-- ARGV: trace id, trigger, signalled at, the stream's approximate maximum length, owner,
-- agent id.
-- Returns {state, trigger id, pending sequences}; state is none, same or published.

local TRACE, PENDING, TRIGGERS, ABANDONED = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local trace_id, trigger, at, stream_max, owner, agent = unpack(ARGV)

local seqs = redis.call('ZRANGE', PENDING, 0, -1)
if #seqs == 0 then return {'none', '', seqs} end
local set = table.concat(seqs, ',')
if redis.call('HGET', TRACE, 'last_trigger_set') == set then
  return {'same', redis.call('HGET', TRACE, 'last_trigger_id'), seqs}
end
local id = redis.call('XADD', TRIGGERS, 'MAXLEN', '~', stream_max, '*', 'trace_id', trace_id,
                      'trigger', trigger, 'query_sequences', set, 'owner', owner,
                      'agent_id', agent, 'signaled_at', at)
redis.call('HSET', TRACE, 'last_trigger_set', set, 'last_trigger_id', id,
           'last_trigger', trigger)
redis.call('DEL', ABANDONED)
return {'published', id, seqs}
