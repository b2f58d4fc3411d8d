import datetime
import logging
import subprocess

from .alembic_runner import upgrade

log = logging.getLogger(__name__)


def backup(dsn: str) -> str:
    path = f"/var/backups/db-{datetime.date.today():%Y%m%d}.dump"
    subprocess.run(["pg_dump", "--format=custom", "--file", path, dsn])
    return path


def migrate(dsn: str):
    path = backup(dsn)
    log.info("backup written to %s; upgrading schema", path)
    upgrade(dsn)
