import { Pool } from "pg";

export async function listCustomers(pool: Pool, sort = "created_at") {
  const { rows } = await pool.query(`SELECT id, name, email, created_at FROM customers ORDER BY ${sort} DESC LIMIT 100`);
  return rows;
}
