export interface Session {
  userId: string;
  expiresAt: number;
}

/** Creates a session that lives ttlMs milliseconds. */
export function createSession(userId: string, ttlMs: number): Session {
  return { userId, expiresAt: Date.now() + ttlMs };
}
