import sqlite3


def sales_by_month(conn: sqlite3.Connection):
    cur = conn.execute(
        "SELECT strftime('%Y-%m', sold_at) AS month, SUM(amount) FROM sales GROUP BY month ORDER BY month"
    )
    return cur.fetchall()
