-- Moves a failed job back onto the job stream, if it is still in the failed stream (of
-- concurrent retries, one wins).
--
-- KEYS: the failed stream, the job stream.
-- ARGV: the failed entry's id, then the new entry's fields and values, alternating.
-- Returns 1 when moved, 0 when the failed entry is gone.

local FAILED, JOBS = KEYS[1], KEYS[2]
local entry_id = ARGV[1]

if #redis.call('XRANGE', FAILED, entry_id, entry_id) == 0 then return 0 end
redis.call('XADD', JOBS, '*', unpack(ARGV, 2))
redis.call('XDEL', FAILED, entry_id)
return 1
