-- Rewrites (or removes) the memo of one job in a conversation's memo list, in one step.
--
-- KEYS: the conversation's memo list.
-- ARGV: the job id, the memo's new entry ('' removes it).
-- Returns the old entry, or false when no memo in the list has that job.

local MEMOS = KEYS[1]
local job_id, entry = ARGV[1], ARGV[2]

local items = redis.call('LRANGE', MEMOS, 0, -1)
for i, item in ipairs(items) do
  if cjson.decode(item)['job_id'] == job_id then
    if entry == '' then
      redis.call('LSET', MEMOS, i - 1, '__deleted__')
      redis.call('LREM', MEMOS, 1, '__deleted__')
    else
      redis.call('LSET', MEMOS, i - 1, entry)
    end
    return item
  end
end
return false
