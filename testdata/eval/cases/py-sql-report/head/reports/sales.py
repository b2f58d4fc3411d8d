import sqlite3
from typing import Optional


def sales_by_month(conn: sqlite3.Connection, region: Optional[str] = None):
    where = ""
    if region:
        where = f"WHERE region = '{region}'"
    cur = conn.execute(
        f"SELECT strftime('%Y-%m', sold_at) AS month, SUM(amount) FROM sales {where} GROUP BY month ORDER BY month"
    )
    return cur.fetchall()
