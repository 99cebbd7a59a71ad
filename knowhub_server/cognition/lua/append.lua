-- Appends a batch of events to one trace's log and updates every index the service
-- answers from, in one atomic step: all or nothing.
--
-- KEYS: as the call's `keys` maps them (name -> index): the trace's own keys, the
-- cross-trace indexes for its owner and agent, the extraction-state indexes and the
-- extractions the batch names.
-- ARGV[1]: the call, JSON (store.py: AppendCall.script_argument); ARGV[2..]: the events
-- as stored, JSON, one per op.
-- Returns {'ok', event ids ('' where skipped), trace fields, pending, abandoned},
-- {'replay', answer}, {'rekey', agent} (nothing written: the trace's agent differs from
-- the one whose index keys were given) or {'error', index, reason, detail}.

local a = cjson.decode(ARGV[1])
local K = a.keys
local function key(name) return KEYS[K[name]] end
local function int(x) return string.format('%d', x) end

local exists = redis.call('EXISTS', key('trace')) == 1
if not exists and a.existing_only then return {'error', '-1', 'missing', ''} end
if a.request_id ~= '' then
  local answer = redis.call('HGET', key('requests'), a.request_id)
  if answer then return {'replay', answer} end
end
if exists and a.create_only then return {'error', '-1', 'exists', ''} end
local agent = exists and redis.call('HGET', key('trace'), 'agent_id') or ''
if agent == '' then agent = a.acting_agent end
if agent ~= a.agent then return {'rekey', agent} end
local count = tonumber(redis.call('HGET', key('trace'), 'event_count') or '0')
if count + #a.ops > a.max_events then
  return {'error', '-1', 'limit', int(count)}
end

-- Pass 1: refuse the whole batch before anything is written.
local queries, states = {}, {}
for i, op in ipairs(a.ops) do
  local at = int(i - 1)
  if op.t == 'query' then
    if queries[op.seq] or redis.call('HEXISTS', key('queries'), op.seq) == 1 then
      return {'error', at, 'duplicate_query', op.seq}
    end
    queries[op.seq] = true
  elseif op.eid then
    local state = states[op.eid]
    if state == nil then state = redis.call('HGET', KEYS[op.xk], 'state') end
    if op.t == 'extraction_pending' then
      if state then return {'error', at, 'duplicate_extraction', op.eid} end
      states[op.eid] = 'pending'
    elseif not state then
      return {'error', at, 'no_extraction', op.eid}
    elseif op.t == 'extraction_reviewed' then
      if state == 'committed' then return {'error', at, 'committed', op.eid} end
      states[op.eid] = op.state
    else
      states[op.eid] = 'committed'
    end
  end
end

-- Pass 2: append and index.
if not exists then
  redis.call('HSET', key('trace'), 'trace_id', a.trace_id, 'owner', a.owner,
             'created_at', a.now, 'agent_id', '', 'task', '', 'auto_commit', '0',
             'event_count', '0', 'unconsumed_reflections', '0')
end
local last = tonumber(redis.call('HGET', key('trace'), 'last_sequence') or '0')
local reflected = tonumber(redis.call('HGET', key('trace'), 'reflected_at_sequence') or '0')
local ids, written = {}, 0

local function move(op, to)
  local member = a.ref .. '|' .. op.eid
  local from = redis.call('HGET', KEYS[op.xk], 'state')
  if from then
    redis.call('ZREM', key('state:' .. from), member)
    redis.call('ZREM', key('owner-state:' .. from), member)
  end
  local score = redis.call('HGET', KEYS[op.xk], 'created_at')
  redis.call('ZADD', key('state:' .. to), score, member)
  redis.call('ZADD', key('owner-state:' .. to), score, member)
  redis.call('HSET', KEYS[op.xk], 'state', to)
end

-- A query waits for a verdict on each of its sources not rated yet.
local function await_sources(op)
  local waiting = {}
  for _, source in ipairs(op.sources) do
    if redis.call('HEXISTS', key('evaluated'), op.seq .. '|' .. source) == 0 then
      table.insert(waiting, source)
    end
  end
  if #waiting > 0 then
    redis.call('HSET', key('awaiting'), op.seq, cjson.encode(waiting))
    redis.call('ZADD', key('pending'), op.seq, op.seq)
  end
end

-- A verdict on one source: the query stays pending until its last source has one.
local function settle_source(op)
  local waiting = redis.call('HGET', key('awaiting'), op.qseq)
  if not waiting then return end
  local left = {}
  for _, source in ipairs(cjson.decode(waiting)) do
    if source ~= op.kid then table.insert(left, source) end
  end
  if #left > 0 then
    redis.call('HSET', key('awaiting'), op.qseq, cjson.encode(left))
  else
    redis.call('HDEL', key('awaiting'), op.qseq)
    redis.call('ZREM', key('pending'), op.qseq)
    redis.call('SREM', key('abandoned'), op.qseq)
  end
end

-- An evaluator gave up: the pending queries are marked so, and the next signal publishes
-- them again.
local function abandon()
  local pending = redis.call('ZRANGE', key('pending'), 0, -1)
  for _, seq in ipairs(pending) do redis.call('SADD', key('abandoned'), seq) end
  redis.call('HDEL', key('trace'), 'last_trigger_set')
end

for i, op in ipairs(a.ops) do
  local skip = false
  if op.t == 'evaluation' then
    skip = redis.call('HSETNX', key('evaluated'), op.pair, op.record) == 0
  elseif op.t == 'extraction_committed' then
    skip = redis.call('HGET', KEYS[op.xk], 'state') == 'committed'
  end
  if skip then
    table.insert(ids, '')
  else
    local id = redis.call('XADD', key('log'), '*', 't', op.t, 'e', ARGV[i + 1])
    table.insert(ids, id)
    written = written + 1
    if op.t == 'query' then
      redis.call('HSET', key('queries'), op.seq, id)
      await_sources(op)
    elseif op.t == 'evaluation' then
      settle_source(op)
      if op.outbox then redis.call('SADD', key('feedback'), op.pair) end
    elseif op.t == 'evaluation_failed' then
      if op.gave_up then abandon() end
    elseif op.t == 'extraction_pending' then
      redis.call('HSET', KEYS[op.xk], 'trace_id', a.trace_id, 'owner', a.owner,
                 'extraction_id', op.eid, 'sequence', op.seq, 'goal_id', op.goal_id,
                 'branch_id', op.branch_id, 'payload', op.payload, 'created_at', op.at,
                 'event_id', id)
      redis.call('ZADD', key('extractions'), op.at, op.eid)
      move(op, 'pending')
    elseif op.t == 'extraction_reviewed' then
      redis.call('HSET', KEYS[op.xk], 'decision', op.decision, 'reviewed_at', op.at)
      if op.edited ~= '' then
        redis.call('HSET', KEYS[op.xk], 'edited_payload', op.edited)
      else
        redis.call('HDEL', KEYS[op.xk], 'edited_payload')
      end
      move(op, op.state)
    elseif op.t == 'extraction_committed' then
      redis.call('HSET', KEYS[op.xk], 'knowledge_id', op.kid, 'committed_at', op.at)
      move(op, 'committed')
    elseif op.t == 'reflection' then
      reflected = math.max(reflected, tonumber(op.range_end))
      last = math.max(last, tonumber(op.range_end))
      if op.consumed_at ~= '' then
        redis.call('HSET', key('consumed'), id, op.consumed_at)
      else
        redis.call('HINCRBY', key('trace'), 'unconsumed_reflections', 1)
      end
    end
    if op.seq then last = math.max(last, tonumber(op.seq)) end
  end
end

if (redis.call('HGET', key('trace'), 'agent_id') or '') == '' and agent ~= '' then
  redis.call('HSET', key('trace'), 'agent_id', agent)
end
if a.task ~= '' then redis.call('HSET', key('trace'), 'task', a.task) end
if a.auto_commit ~= '' then redis.call('HSET', key('trace'), 'auto_commit', a.auto_commit) end
redis.call('HSET', key('trace'), 'updated_at', a.now, 'last_sequence', int(last),
           'reflected_at_sequence', int(reflected))
redis.call('HINCRBY', key('trace'), 'event_count', written)
redis.call('ZADD', key('traces'), a.now, a.ref)
redis.call('ZADD', key('traces-owner'), a.now, a.ref)
if agent ~= '' then
  redis.call('ZADD', key('traces-agent'), a.now, a.ref)
  redis.call('ZADD', key('traces-owner-agent'), a.now, a.ref)
end

if a.request_id ~= '' then
  redis.call('HSET', key('requests'), a.request_id, a.digest .. ' ' .. table.concat(ids, ','))
  redis.call('ZADD', key('request-order'), a.now, a.request_id)
  local excess = redis.call('ZCARD', key('request-order')) - a.requests_kept
  if excess > 0 then
    local old = redis.call('ZRANGE', key('request-order'), 0, excess - 1)
    redis.call('ZREMRANGEBYRANK', key('request-order'), 0, excess - 1)
    redis.call('HDEL', key('requests'), unpack(old))
  end
end
return {'ok', ids, redis.call('HGETALL', key('trace')), redis.call('ZCARD', key('pending')),
        redis.call('SCARD', key('abandoned'))}
