-- Deletes one trace in one atomic step: its record, log and indexes, its extractions, and
-- its entries in the cross-trace indexes.
--
-- KEYS: as the call's `keys` maps them; the call also names, in `trace_keys`, every key
-- of the trace itself, in `indexes` the indexes it is a member of, and in `extractions`
-- the extraction ids it was read with (creation order) with their keys.
-- ARGV[1]: the call, JSON (store.py: TraceDeletion.script_argument).
-- Returns {'deleted', events, extractions}, {'missing'}, or {'changed'} when the trace
-- gained an agent or an extraction since it was read (nothing deleted: read it again).

local a = cjson.decode(ARGV[1])
local K = a.keys
local function key(name) return KEYS[K[name]] end

if redis.call('EXISTS', key('trace')) == 0 then return {'missing'} end
if (redis.call('HGET', key('trace'), 'agent_id') or '') ~= a.agent then return {'changed'} end
local ids = redis.call('ZRANGE', key('extractions'), 0, -1)
if #ids ~= #a.extractions then return {'changed'} end
for i, id in ipairs(ids) do
  if id ~= a.extractions[i].id then return {'changed'} end
end

local events = redis.call('XLEN', key('log'))
for _, extraction in ipairs(a.extractions) do
  local member = a.ref .. '|' .. extraction.id
  for _, name in ipairs(a.state_indexes) do redis.call('ZREM', key(name), member) end
  redis.call('UNLINK', KEYS[extraction.key])
end
for _, name in ipairs(a.indexes) do redis.call('ZREM', key(name), a.ref) end
for _, name in ipairs(a.trace_keys) do redis.call('UNLINK', key(name)) end
return {'deleted', events, #ids}
