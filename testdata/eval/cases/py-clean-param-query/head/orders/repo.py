def order_by_id(conn, order_id):
    return conn.execute("SELECT id, email, total FROM orders WHERE id = ?", (order_id,)).fetchone()


def orders_by_email(conn, email, limit=50):
    """Return the customer's latest orders, newest first."""
    return conn.execute(
        "SELECT id, email, total FROM orders WHERE lower(email) = lower(?) ORDER BY created_at DESC LIMIT ?",
        (email.strip(), limit),
    ).fetchall()
