import logging

from .alembic_runner import upgrade

log = logging.getLogger(__name__)


def migrate(dsn: str):
    log.info("upgrading schema")
    upgrade(dsn)
