-- Moves one trace stored under its bare trace id (before traces were named per owner) to
-- its owner's name, in one atomic step: every key of the trace renamed, its members of
-- the cross-trace indexes renamed, and its pending queries recomputed (a query waits for
-- a verdict on each of its sources).
--
-- KEYS: as the call's `keys` maps them: `old:<kind>` and `new:<kind>` for each kind of
-- the call's `kinds`, the extractions' old and new keys, and the indexes.
-- ARGV[1]: the call, JSON (store.py: LegacyTrace.script_argument).
-- Returns 1 when moved, 0 when there was nothing left to move (another process did).

local a = cjson.decode(ARGV[1])
local K = a.keys
local function key(name) return KEYS[K[name]] end

local function rename_member(index, from, to)
  local score = redis.call('ZSCORE', index, from)
  if score then
    redis.call('ZREM', index, from)
    redis.call('ZADD', index, score, to)
  end
end

if redis.call('EXISTS', key('old:trace')) == 0 then return 0 end
for _, kind in ipairs(a.kinds) do
  if redis.call('EXISTS', key('old:' .. kind)) == 1 then
    redis.call('RENAME', key('old:' .. kind), key('new:' .. kind))
  end
end
for _, name in ipairs(a.dropped) do redis.call('DEL', key(name)) end
for _, extraction in ipairs(a.extractions) do
  if redis.call('EXISTS', KEYS[extraction.old]) == 1 then
    redis.call('RENAME', KEYS[extraction.old], KEYS[extraction.new])
    redis.call('HSET', KEYS[extraction.new], 'owner', a.owner)
  end
  for _, name in ipairs(a.state_indexes) do
    rename_member(key(name), a.legacy_id .. '|' .. extraction.id, a.ref .. '|' .. extraction.id)
  end
end
for _, name in ipairs(a.indexes) do rename_member(key(name), a.legacy_id, a.ref) end
redis.call('DEL', key('new:pending'), key('new:awaiting'))
for _, query in ipairs(a.awaiting) do
  redis.call('HSET', key('new:awaiting'), query.seq, cjson.encode(query.sources))
  redis.call('ZADD', key('new:pending'), query.seq, query.seq)
end
return 1
