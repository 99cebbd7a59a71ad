-- Writes a plan's documents, keeping each replaced revision, and records the reflections
-- it integrated for consumption: all or nothing, and nothing if a document moved since the
-- plan was made (its revision is not the one the LLM saw).
--
-- KEYS: the agent's documents, its outbox, then the kept revisions of each updated
-- document, in the order of the updates.
-- ARGV[1]: the plan, JSON (store.py: DreamStore.apply_plan): updates ({path, expected
-- revision, document}), now, the revisions kept, the outbox field and its value.
-- Returns '' when written, else the path of the first document that moved.

local DOCS, OUTBOX = KEYS[1], KEYS[2]
local a = cjson.decode(ARGV[1])

for i, u in ipairs(a.updates) do
  local current = redis.call('HGET', DOCS, u.path)
  local revision = 0
  if current then revision = cjson.decode(current).revision end
  if revision ~= u.expected then return u.path end
end
for i, u in ipairs(a.updates) do
  local current = redis.call('HGET', DOCS, u.path)
  if current then
    redis.call('LPUSH', KEYS[2 + i], '{"replaced_at":' .. a.now .. ',"document":' .. current .. '}')
    redis.call('LTRIM', KEYS[2 + i], 0, a.keep - 1)
  end
  redis.call('HSET', DOCS, u.path, u.document)
end
redis.call('HSET', OUTBOX, a.outbox_field, a.outbox)
return ''
