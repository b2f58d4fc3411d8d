from flask import abort, request

from .keys import lookup_key


def presented_key():
    header = request.headers.get("X-Api-Key")
    if header.strip():
        return header.strip()
    return request.args.get("api_key")


def require_key():
    key = presented_key()
    if not key or lookup_key(key) is None:
        abort(401)
