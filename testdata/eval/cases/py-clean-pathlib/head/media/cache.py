from pathlib import Path

CACHE_DIR = Path("/var/cache/thumbs")


def thumb_path(image_id: int, size: int) -> Path:
    return CACHE_DIR / str(size) / f"{image_id}.webp"


def cached(image_id: int, size: int) -> bool:
    return thumb_path(image_id, size).exists()
