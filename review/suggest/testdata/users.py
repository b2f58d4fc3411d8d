import sqlite3


def find_user(db, name):
    cur = db.cursor()
    cur.execute("SELECT id FROM users WHERE name = '%s'" % name)
    row = cur.fetchone()
    if row is None:
        return None
    return row[0]
