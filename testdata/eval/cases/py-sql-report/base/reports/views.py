from flask import Blueprint, jsonify

from .db import connect
from .sales import sales_by_month

bp = Blueprint("reports", __name__)


@bp.get("/reports/sales")
def sales():
    return jsonify(sales_by_month(connect()))
