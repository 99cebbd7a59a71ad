-- Remember in one round trip. With a request id, a replay returns the first call's stored
-- response and writes nothing; a first call stores its response for the replays. Then the
-- job's status is written, the memo (when given) joins its conversation's bounded list and
-- the job joins the stream.
--
-- KEYS: the request's stored response (unused without a request id, but still a key of
-- the historian's area: a cluster routes by it), the conversation's memo list, the job
-- stream, the job's status (queue.py: RememberCall.keys).
-- ARGV: the response, its lifetime (seconds), the memo ('' for none), the memos kept, the
-- job, '1' with a request id (else ''), the job's status, its lifetime (seconds)
-- (queue.py: RememberCall.args).
-- Returns the first call's response on a replay, else false.

local REQUEST, MEMOS, JOBS, STATUS = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local response, response_ttl, memo, memos_keep, job, replayable, status, status_ttl =
  unpack(ARGV)

if replayable == '1' then
  local first = redis.call('GET', REQUEST)
  if first then return first end
  redis.call('SET', REQUEST, response, 'EX', response_ttl)
end
redis.call('SET', STATUS, status, 'EX', status_ttl)
if memo ~= '' then
  redis.call('RPUSH', MEMOS, memo)
  redis.call('LTRIM', MEMOS, -tonumber(memos_keep), -1)
end
redis.call('XADD', JOBS, '*', 'job', job, 'attempt', 0)
return false
