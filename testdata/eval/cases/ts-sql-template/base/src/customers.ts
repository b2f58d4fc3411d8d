import { Pool } from "pg";

export async function listCustomers(pool: Pool) {
  const { rows } = await pool.query("SELECT id, name, email, created_at FROM customers ORDER BY created_at DESC LIMIT 100");
  return rows;
}
