from concurrent.futures import ThreadPoolExecutor

from .logs import read_shard


def count_views(shards, workers=8):
    counts = {}

    def count(shard):
        for entry in read_shard(shard):
            counts[entry.path] = counts.get(entry.path, 0) + 1

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(count, shards))
    return counts
