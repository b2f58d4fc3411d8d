from dataclasses import dataclass
from typing import Optional


@dataclass
class Account:
    id: int
    owner: str
    balance_cents: int


class AccountRepo:
    def __init__(self, db):
        self.db = db

    def find(self, account_id: int) -> Optional[Account]:
        """Return the account, or None when it does not exist."""
        row = self.db.execute(
            "SELECT id, owner, balance_cents FROM accounts WHERE id = ?", (account_id,)
        ).fetchone()
        if row is None:
            return None
        return Account(*row)
