-- Appends an audit record to the stream only before a deadline, by the Redis server's
-- clock: a Redis that froze and resumes late must not record what the caller was already
-- refused.
--
-- KEYS: the audit stream (audit.py: AppendCall.keys).
-- ARGV: the deadline (milliseconds since the epoch), then the record's fields and values,
-- alternating (audit.py: AppendCall.args).
-- Returns the new entry's id, or false when the deadline has passed.

local STREAM = KEYS[1]
local deadline_ms = tonumber(ARGV[1])

local time = redis.call('TIME')
if time[1] * 1000 + math.floor(time[2] / 1000) > deadline_ms then return false end
return redis.call('XADD', STREAM, '*', unpack(ARGV, 2))
