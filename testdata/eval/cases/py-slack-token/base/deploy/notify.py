import logging

log = logging.getLogger(__name__)


def announce(version):
    log.info("deployed %s", version)
