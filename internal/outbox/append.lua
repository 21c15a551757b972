-- Appends a batch of order events to the stream KEYS[1], in order, as one
-- script: Redis runs it whole, so no other client sees half a batch, and a
-- failure part way leaves a prefix of the batch appended, never an order's
-- later event without its earlier one.
-- ARGV[1]: the stream's approximate maximum length (0: not trimmed);
-- then per event four values: id, type, subject (the order id), event (the
-- CloudEvents envelope, JSON).
local maxlen = tonumber(ARGV[1])
for i = 2, #ARGV, 4 do
    if maxlen > 0 then
        redis.call('XADD', KEYS[1], 'MAXLEN', '~', maxlen, '*',
            'id', ARGV[i], 'type', ARGV[i + 1], 'subject', ARGV[i + 2], 'event', ARGV[i + 3])
    else
        redis.call('XADD', KEYS[1], '*',
            'id', ARGV[i], 'type', ARGV[i + 1], 'subject', ARGV[i + 2], 'event', ARGV[i + 3])
    end
end
return (#ARGV - 1) / 4
