import os

CACHE_DIR = "/var/cache/thumbs"


def thumb_path(image_id, size):
    return os.path.join(CACHE_DIR, str(size), f"{image_id}.webp")


def cached(image_id, size):
    return os.path.exists(thumb_path(image_id, size))
