from collections import Counter

from .logs import read_shard


def count_views(shards):
    counts = Counter()
    for shard in shards:
        for entry in read_shard(shard):
            counts[entry.path] += 1
    return counts
