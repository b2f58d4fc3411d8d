import { db } from "./db";

/** Stores an audit entry; rejects when the audit table is unavailable. */
export async function audit(action: string, subject: string): Promise<void> {
  await db.audit.insert({ action, subject, at: new Date() });
}
