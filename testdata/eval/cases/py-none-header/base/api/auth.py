from flask import abort, request

from .keys import lookup_key


def require_key():
    key = request.args.get("api_key")
    if not key or lookup_key(key) is None:
        abort(401)
