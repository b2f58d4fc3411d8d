import { createSession } from "./session";

export function login(userId: string, remember: boolean) {
  return createSession(userId, remember ? 30 * 24 * 3600 : 3600);
}
