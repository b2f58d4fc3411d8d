def order_by_id(conn, order_id):
    return conn.execute("SELECT id, email, total FROM orders WHERE id = ?", (order_id,)).fetchone()
