import { db } from "../db";
import { audit } from "../audit";

export async function deleteUser(id: string): Promise<void> {
  try {
    audit("user.delete", id);
  } catch (err) {
    throw new Error(`audit failed, user ${id} not deleted: ${err}`);
  }
  await db.users.delete(id);
}
