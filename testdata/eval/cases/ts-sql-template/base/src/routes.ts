import { Router } from "express";
import { pool } from "./db";
import { listCustomers } from "./customers";

export const router = Router();

router.get("/admin/customers", async (_req, res) => {
  res.json(await listCustomers(pool));
});
