import { db } from "../db";

export async function deleteUser(id: string): Promise<void> {
  await db.users.delete(id);
}
