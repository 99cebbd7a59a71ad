-- Marks reflection events of one trace consumed (sets their consumed_at once).
--
-- KEYS: the trace record, its log, its consumed-reflections hash.
-- ARGV: consumed at, then the reflection event ids.
-- Returns {'ok', newly consumed} or {'error', index, missing | not_reflection}.

local TRACE, LOG, CONSUMED = KEYS[1], KEYS[2], KEYS[3]

for i = 2, #ARGV do
  local entry = redis.call('XRANGE', LOG, ARGV[i], ARGV[i])
  if #entry == 0 then return {'error', tostring(i - 2), 'missing'} end
  if entry[1][2][2] ~= 'reflection' then return {'error', tostring(i - 2), 'not_reflection'} end
end
local consumed = 0
for i = 2, #ARGV do
  if redis.call('HSETNX', CONSUMED, ARGV[i], ARGV[1]) == 1 then consumed = consumed + 1 end
end
if consumed > 0 then redis.call('HINCRBY', TRACE, 'unconsumed_reflections', -consumed) end
return {'ok', tostring(consumed)}
