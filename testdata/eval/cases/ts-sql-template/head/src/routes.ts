import { Router } from "express";
import { pool } from "./db";
import { listCustomers } from "./customers";

export const router = Router();

router.get("/admin/customers", async (req, res) => {
  res.json(await listCustomers(pool, String(req.query.sort ?? "created_at")));
});
