-- One agent's or admin's write of a document, keeping the revision it replaces.
--
-- KEYS: the agent's documents, the document's kept revisions (store.py: WriteCall.keys).
-- ARGV: the path, the expected revision (-1: any), the mode ('append' adds a line to the
-- content, else it replaces it), the content, the time, the revisions kept, the writer,
-- the most characters a document holds (store.py: WriteCall.args).
-- Returns the new document (JSON), or an error marker: 'moved:<revision>' or
-- 'too-long:<characters>'.

local DOCS, REVISIONS = KEYS[1], KEYS[2]
local path, expected, mode, written, at, keep, writer, max_chars = unpack(ARGV)

local current = redis.call('HGET', DOCS, path)
local old = nil
local revision = 0
if current then old = cjson.decode(current); revision = old.revision end
if tonumber(expected) >= 0 and revision ~= tonumber(expected) then
  return 'moved:' .. revision
end
local content = written
if mode == 'append' and old and old.content ~= '' then
  content = old.content .. '\n' .. written
end
local chars = select(2, string.gsub(content, '[^\128-\191]', ''))
if chars > tonumber(max_chars) then return 'too-long:' .. chars end
local doc = cjson.encode({content = content, revision = revision + 1,
                          updated_at = tonumber(at), run_id = '', written_by = writer})
if current then
  redis.call('LPUSH', REVISIONS, '{"replaced_at":' .. at .. ',"document":' .. current .. '}')
  redis.call('LTRIM', REVISIONS, 0, tonumber(keep) - 1)
end
redis.call('HSET', DOCS, path, doc)
return doc
