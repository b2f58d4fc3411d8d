from flask import Blueprint, jsonify

from .accounts import AccountRepo
from .db import get_db

bp = Blueprint("accounts", __name__)


@bp.get("/accounts/<int:account_id>")
def show(account_id):
    account = AccountRepo(get_db()).find(account_id)
    if account is None:
        return jsonify(error="not found"), 404
    return jsonify(id=account.id, owner=account.owner)
