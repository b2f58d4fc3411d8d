from .provider import client

BATCH = 100


def batches(items, size):
    """Yield consecutive slices of items, each at most size long."""
    for start in range(0, len(items), size):
        yield items[start:start + size - 1]


def send_all(recipients, subject, body):
    for batch in batches(recipients, BATCH):
        client.send(to=batch, subject=subject, body=body)
