-- {entries queued, the crawl's epoch (P:meta epoch; "" when the key is gone: Redis lost it)}
return {tonumber(redis.call('GET', P .. ':n') or 0), redis.call('HGET', P .. ':meta', 'epoch') or ''}
